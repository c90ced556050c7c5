//! The part of GitHub's REST API the Action's pull request comment speaks, on loopback: one
//! pull request's issue comments, listed page by page (`per_page`, `page`, a `Link` header as
//! GitHub sends), created with POST and edited with PATCH; and issues, read one at a time
//! (`GET /repos/{owner}/{repo}/issues/{n}`, any repository). It checks the bearer token, records
//! every request (through [`ChatServer`]) and can be told to refuse writes or listings.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use super::chat_server::{Action, ChatServer, Received};

/// One comment as the fake API holds it.
#[derive(Debug, Clone)]
pub struct Comment {
    pub id: u64,
    pub user: String,
    pub body: String,
}

#[derive(Default)]
struct Thread {
    comments: Vec<Comment>,
    next_id: u64,
    /// Answers POST and PATCH with this status and message instead.
    refuse_writes: Option<(u16, String)>,
    /// Answers GET with this status and message instead.
    refuse_listing: Option<(u16, String)>,
    /// Issues by their API path (`/repos/{owner}/{repo}/issues/{n}`).
    issues: std::collections::BTreeMap<String, Value>,
}

pub struct FakeGitHub {
    server: ChatServer,
    /// `GITHUB_API_URL` for the client.
    pub api: String,
    thread: Arc<Mutex<Thread>>,
}

/// The user the token belongs to, as GitHub names the Actions token's.
pub const BOT: &str = "github-actions[bot]";

impl FakeGitHub {
    /// Pull request `number` of `repo` (`owner/name`), whose token is `token`.
    pub fn start(repo: &str, number: u64, token: &str) -> FakeGitHub {
        let thread = Arc::new(Mutex::new(Thread {
            next_id: 1000,
            ..Thread::default()
        }));
        let list_path = format!("/repos/{repo}/issues/{number}/comments");
        let edit_prefix = format!("/repos/{repo}/issues/comments/");
        let bearer = format!("Bearer {token}");
        let state = Arc::clone(&thread);
        let base = Arc::new(Mutex::new(String::new()));
        let base_in_script = Arc::clone(&base);
        let server = ChatServer::start(move |r: &Received| {
            if r.header("authorization") != Some(bearer.as_str()) {
                return error(401, "Bad credentials");
            }
            let mut t = state.lock().unwrap();
            let (path, query) = r.path.split_once('?').unwrap_or((r.path.as_str(), ""));
            match r.method.as_str() {
                "GET" if path == list_path => {
                    if let Some((status, message)) = &t.refuse_listing {
                        return error(*status, message);
                    }
                    let param = |name: &str| {
                        query
                            .split('&')
                            .find_map(|kv| kv.strip_prefix(&format!("{name}=")))
                            .and_then(|v| v.parse::<usize>().ok())
                    };
                    // GitHub's defaults: 30 a page, at most 100.
                    let per_page = param("per_page").unwrap_or(30).min(100);
                    let page = param("page").unwrap_or(1).max(1);
                    let items: Vec<Value> = t
                        .comments
                        .iter()
                        .skip((page - 1) * per_page)
                        .take(per_page)
                        .map(|c| as_json(c, &base_in_script.lock().unwrap()))
                        .collect();
                    let mut answer = Action::ok(Value::Array(items).to_string());
                    if page * per_page < t.comments.len() {
                        let next = format!(
                            "<{}{list_path}?per_page={per_page}&page={}>; rel=\"next\"",
                            base_in_script.lock().unwrap(),
                            page + 1
                        );
                        answer = answer.header("link", &next);
                    }
                    answer
                }
                "GET" if t.issues.contains_key(path) => Action::ok(t.issues[path].to_string()),
                "POST" if path == list_path => {
                    if let Some((status, message)) = &t.refuse_writes {
                        return error(*status, message);
                    }
                    let Some(body) = r.body["body"].as_str() else {
                        return error(422, "Invalid request: body is missing");
                    };
                    t.next_id += 1;
                    let c = Comment {
                        id: t.next_id,
                        user: BOT.to_string(),
                        body: body.to_string(),
                    };
                    t.comments.push(c.clone());
                    Action::status(
                        201,
                        as_json(&c, &base_in_script.lock().unwrap()).to_string(),
                    )
                }
                "PATCH" if path.starts_with(&edit_prefix) => {
                    if let Some((status, message)) = &t.refuse_writes {
                        return error(*status, message);
                    }
                    let id = path[edit_prefix.len()..].parse::<u64>().ok();
                    let Some(body) = r.body["body"].as_str() else {
                        return error(422, "Invalid request: body is missing");
                    };
                    match t.comments.iter_mut().find(|c| Some(c.id) == id) {
                        // As GitHub: only the author may edit (without admin rights).
                        Some(c) if c.user != BOT => error(403, "Must have admin rights"),
                        Some(c) => {
                            c.body = body.to_string();
                            let c = c.clone();
                            Action::ok(as_json(&c, &base_in_script.lock().unwrap()).to_string())
                        }
                        None => error(404, "Not Found"),
                    }
                }
                _ => error(404, "Not Found"),
            }
        });
        let api = server
            .url
            .strip_suffix("/v1/chat/completions")
            .expect("the server's address")
            .to_string();
        *base.lock().unwrap() = api.clone();
        FakeGitHub {
            server,
            api,
            thread,
        }
    }

    /// A comment already on the pull request.
    pub fn add(&self, user: &str, body: &str) -> u64 {
        let mut t = self.thread.lock().unwrap();
        t.next_id += 1;
        let id = t.next_id;
        t.comments.push(Comment {
            id,
            user: user.to_string(),
            body: body.to_string(),
        });
        id
    }

    /// Issue `number` of `repo` (`owner/name`); `body` `None` is GitHub's `null` body.
    pub fn add_issue(&self, repo: &str, number: u64, title: &str, body: Option<&str>) {
        self.thread.lock().unwrap().issues.insert(
            format!("/repos/{repo}/issues/{number}"),
            json!({"number": number, "title": title, "body": body, "state": "open"}),
        );
    }

    pub fn comments(&self) -> Vec<Comment> {
        self.thread.lock().unwrap().comments.clone()
    }

    pub fn refuse_writes(&self, status: u16, message: &str) {
        self.thread.lock().unwrap().refuse_writes = Some((status, message.to_string()));
    }

    pub fn refuse_listing(&self, status: u16, message: &str) {
        self.thread.lock().unwrap().refuse_listing = Some((status, message.to_string()));
    }

    /// Every request received, in order.
    pub fn requests(&self) -> Vec<Received> {
        self.server.received()
    }
}

fn as_json(c: &Comment, base: &str) -> Value {
    json!({
        "id": c.id,
        "body": c.body,
        "user": {"login": c.user, "type": if c.user == BOT { "Bot" } else { "User" }},
        "html_url": format!("{base}/acme/app/pull/2#issuecomment-{}", c.id),
    })
}

fn error(status: u16, message: &str) -> Action {
    Action::status(
        status,
        json!({
            "message": message,
            "documentation_url": "https://docs.github.com/rest",
            "status": status.to_string(),
        })
        .to_string(),
    )
}
