//! A chat-completions endpoint on loopback for the judge's tests and bench: HTTP/1.1 on
//! `127.0.0.1`, one thread per connection, `Connection: close` on every answer. What it answers
//! is a script (a closure over each request received); it records every request and counts how
//! many are in flight at once.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};

/// One request as the server read it.
#[derive(Debug, Clone)]
pub struct Received {
    /// 0 for the first request the server read, then 1, 2...
    pub index: usize,
    pub method: String,
    pub path: String,
    /// Header names lower-cased.
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == &name.to_ascii_lowercase())
            .map(|(_, v)| v.as_str())
    }

    /// The request JSON the judge was sent (the user message), parsed.
    pub fn judge_request(&self) -> Value {
        let user = self.body["messages"][1]["content"]
            .as_str()
            .expect("a user message");
        serde_json::from_str(user).expect("the user message is the request JSON")
    }
}

/// What the server does with one request.
pub enum Action {
    Respond {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
        /// Waited before answering.
        delay: Duration,
    },
    /// Read the request, then never answer (until the server is dropped).
    Hang,
    /// Answer 200 with the headers and the first half of `body` (its full length promised),
    /// then close the connection: a connection dropped mid-answer.
    DropMidAnswer { body: String },
}

impl Action {
    pub fn ok(body: String) -> Action {
        Action::status(200, body)
    }

    pub fn status(status: u16, body: impl Into<String>) -> Action {
        Action::Respond {
            status,
            headers: Vec::new(),
            body: body.into(),
            delay: Duration::ZERO,
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Action {
        if let Action::Respond { headers, .. } = &mut self {
            headers.push((name.to_string(), value.to_string()));
        }
        self
    }

    pub fn after(mut self, wait: Duration) -> Action {
        if let Action::Respond { delay, .. } = &mut self {
            *delay = wait;
        }
        self
    }
}

type Script = dyn Fn(&Received) -> Action + Send + Sync;

struct State {
    script: Box<Script>,
    received: Mutex<Vec<Received>>,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    stop: AtomicBool,
}

/// The server; stops when dropped.
pub struct ChatServer {
    pub url: String,
    addr: std::net::SocketAddr,
    state: Arc<State>,
}

impl ChatServer {
    pub fn start(script: impl Fn(&Received) -> Action + Send + Sync + 'static) -> ChatServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let addr = listener.local_addr().expect("the bound address");
        let state = Arc::new(State {
            script: Box::new(script),
            received: Mutex::new(Vec::new()),
            in_flight: AtomicUsize::new(0),
            max_in_flight: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
        });
        let accepting = Arc::clone(&state);
        thread::spawn(move || {
            for stream in listener.incoming() {
                if accepting.stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let state = Arc::clone(&accepting);
                thread::spawn(move || serve(&state, stream));
            }
        });
        ChatServer {
            url: format!("http://{addr}/v1/chat/completions"),
            addr,
            state,
        }
    }

    /// Every request read so far, in the order read.
    pub fn received(&self) -> Vec<Received> {
        self.state.received.lock().unwrap().clone()
    }

    /// The most requests read and not yet answered at one time: never more than the client had
    /// in flight.
    pub fn max_in_flight(&self) -> usize {
        self.state.max_in_flight.load(Ordering::SeqCst)
    }
}

impl Drop for ChatServer {
    fn drop(&mut self) {
        self.state.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(self.addr);
    }
}

fn serve(state: &State, stream: TcpStream) {
    let Some(mut request) = read_request(&stream) else {
        return;
    };
    let now = state.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    state.max_in_flight.fetch_max(now, Ordering::SeqCst);
    {
        let mut received = state.received.lock().unwrap();
        request.index = received.len();
        received.push(request.clone());
    }
    match (state.script)(&request) {
        Action::Hang => {
            while !state.stop.load(Ordering::SeqCst) {
                thread::sleep(Duration::from_millis(20));
            }
            state.in_flight.fetch_sub(1, Ordering::SeqCst);
        }
        Action::DropMidAnswer { body } => {
            state.in_flight.fetch_sub(1, Ordering::SeqCst);
            let half = &body.as_bytes()[..body.len() / 2];
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            let mut stream = &stream;
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(half);
            let _ = stream.flush();
        }
        Action::Respond {
            status,
            headers,
            body,
            delay,
        } => {
            thread::sleep(delay);
            // Out of the count before the answer goes: once the client has it, it may start its
            // next request before this thread runs again, and counting both would report more
            // at once than the client ever had.
            state.in_flight.fetch_sub(1, Ordering::SeqCst);
            let mut out = format!(
                "HTTP/1.1 {status} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
                reason(status),
                body.len()
            );
            for (name, value) in headers {
                out.push_str(&format!("{name}: {value}\r\n"));
            }
            out.push_str("\r\n");
            out.push_str(&body);
            let mut stream = &stream;
            let _ = stream.write_all(out.as_bytes());
            let _ = stream.flush();
        }
    }
    let _ = stream.shutdown(Shutdown::Both);
}

fn read_request(stream: &TcpStream) -> Option<Received> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':')?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
    }
    let length = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Received {
        index: 0,
        method,
        path,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    })
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

/// A chat completion whose first choice says `content`, with usage when given.
pub fn completion(content: &str, usage: Option<(u64, u64)>) -> String {
    let mut body = json!({
        "id": "chatcmpl-loopback",
        "object": "chat.completion",
        "model": "loopback",
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "finish_reason": "stop",
        }],
    });
    if let Some((prompt, completion)) = usage {
        body["usage"] = json!({
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        });
    }
    body.to_string()
}

/// An answer to the judge request the server received: `decision`, echoing its commits.
pub fn answer_for(received: &Received, decision: &str) -> String {
    let request = received.judge_request();
    json!({
        "schema": "claim_check.judge.response.v1",
        "base": request["base"],
        "head": request["head"],
        "decision": decision,
        "rationale": format!("about {}", request["criterion"]["id"].as_str().unwrap_or("?")),
        "obligations": [],
    })
    .to_string()
}
