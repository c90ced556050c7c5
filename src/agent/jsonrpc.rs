//! The MCP server's stdio transport: one JSON-RPC message a line, as the protocol's stdio
//! transport has it, answering what the SDK leaves unanswered. `rmcp`'s own transport ignores a
//! line that is not JSON, and takes a `tools/call` whose `arguments` is not an object for an
//! unknown method; JSON-RPC 2.0 answers the first with -32700 and the second with -32602.
//!
//! In: the client's bytes (stdin). Out: `rmcp`'s messages for the server, and on stdout its
//! replies and these answers, each a whole line.
//!
//! Steps, for each line:
//! 1. the line is read up to [`LINE_LIMIT`] bytes; a longer one is dropped to its end and
//!    answered -32600 (Invalid Request), `"id": null`;
//! 2. a blank line is skipped; a line that is not JSON (nor UTF-8) is answered -32700 (Parse
//!    error) with `"id": null`, as JSON-RPC 2.0 answers when the id cannot be read;
//! 3. a `tools/call` request whose `params` is not an object with a string `name` and, when
//!    present, an object `arguments` is answered -32602 (Invalid params), with its id;
//! 4. what `rmcp` reads as a message goes on to the server; any other JSON is answered -32600
//!    with its id when it has one (a notification, which has none, is dropped unanswered).
//!
//! Every line written, the server's and these answers, is written whole under one lock and
//! flushed, so that none interleave. An answer is written by a task of its own, so that the
//! server dropping a `receive` (it waits on several things at once) cannot cut it short;
//! `close` waits for those tasks.

use std::future::Future;
use std::io;
use std::sync::Arc;

use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleServer;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;
use tokio::task::JoinSet;

/// The longest line read (rmcp's own limit).
pub const LINE_LIMIT: usize = 16 << 20;

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const INVALID_PARAMS: i64 = -32602;

/// The transport over a reader and a writer (stdin and stdout).
pub struct Lines<R, W> {
    read: BufReader<R>,
    /// The line read so far: a `receive` dropped mid-line resumes it.
    line: Vec<u8>,
    /// Dropping the rest of a line over the limit.
    discarding: bool,
    out: Arc<Mutex<W>>,
    answers: JoinSet<()>,
}

/// What one line is.
#[derive(Debug)]
pub enum Incoming {
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    /// Nothing to do: a blank line, a notification that cannot be read.
    Nothing,
    /// The line to answer with.
    Answer(Vec<u8>),
}

impl<R, W> Lines<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    pub fn new(read: R, write: W) -> Self {
        Lines {
            read: BufReader::new(read),
            line: Vec::new(),
            discarding: false,
            out: Arc::new(Mutex::new(write)),
            answers: JoinSet::new(),
        }
    }

    /// Step 1: the next whole line (the last may lack its newline), `Err` for one over the
    /// limit, `None` at the end of the input.
    async fn next_line(&mut self) -> Option<Result<Vec<u8>, ()>> {
        loop {
            let room = LINE_LIMIT.saturating_sub(self.line.len()).max(1) as u64;
            let n = (&mut self.read)
                .take(room)
                .read_until(b'\n', &mut self.line)
                .await
                .ok()?;
            if self.line.ends_with(b"\n") || (n == 0 && !self.line.is_empty()) {
                let line = std::mem::take(&mut self.line);
                if std::mem::take(&mut self.discarding) {
                    continue;
                }
                return Some(Ok(line));
            }
            if n == 0 {
                return None;
            }
            if self.line.len() >= LINE_LIMIT {
                self.line.clear();
                if !std::mem::replace(&mut self.discarding, true) {
                    return Some(Err(()));
                }
            }
        }
    }
}

/// Steps 2 to 4 for one line.
pub fn read_line(line: &[u8]) -> Incoming {
    let line = line
        .strip_prefix(b"\xef\xbb\xbf".as_slice())
        .unwrap_or(line);
    let line = line.trim_ascii();
    if line.is_empty() {
        return Incoming::Nothing;
    }
    let value: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => {
            return Incoming::Answer(answer(
                Value::Null,
                PARSE_ERROR,
                &format!("Parse error: the message is not JSON ({e})"),
            ))
        }
    };
    let id = match value.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => Some(id.clone()),
        _ => None,
    };
    let is_notification = id.is_none() && value.get("method").is_some();
    if let Some(id) = &id {
        if value.get("method").and_then(Value::as_str) == Some("tools/call") {
            if let Some(problem) = call_params_problem(value.get("params")) {
                return Incoming::Answer(answer(
                    id.clone(),
                    INVALID_PARAMS,
                    &format!("Invalid params: {problem}"),
                ));
            }
        }
    }
    match serde_json::from_value::<RxJsonRpcMessage<RoleServer>>(value) {
        Ok(message) => Incoming::Message(Box::new(message)),
        Err(_) if is_notification => Incoming::Nothing,
        Err(e) => Incoming::Answer(answer(
            id.unwrap_or(Value::Null),
            INVALID_REQUEST,
            &format!("Invalid Request: not a JSON-RPC 2.0 message ({e})"),
        )),
    }
}

/// What is wrong with a `tools/call`'s params, if anything.
fn call_params_problem(params: Option<&Value>) -> Option<String> {
    let Some(Value::Object(params)) = params else {
        return Some(format!(
            "`params` is {}, not an object naming the tool (`name`) and its `arguments`",
            kind(params)
        ));
    };
    if !matches!(params.get("name"), Some(Value::String(_))) {
        return Some(format!(
            "`params.name`, the tool to call, is {}, not a string",
            kind(params.get("name"))
        ));
    }
    match params.get("arguments") {
        None | Some(Value::Null | Value::Object(_)) => None,
        other => Some(format!(
            "`params.arguments` is {}, not an object: pass the tool's arguments as a JSON object (`{{\"base\": \"main\"}}`), not encoded in a string",
            kind(other)
        )),
    }
}

fn kind(v: Option<&Value>) -> &'static str {
    match v {
        None => "missing",
        Some(Value::Null) => "null",
        Some(Value::Bool(_)) => "a boolean",
        Some(Value::Number(_)) => "a number",
        Some(Value::String(_)) => "a string",
        Some(Value::Array(_)) => "an array",
        Some(Value::Object(_)) => "an object",
    }
}

/// A JSON-RPC 2.0 error response, as one line's bytes (without its newline).
pub fn answer(id: Value, code: i64, message: &str) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
        .to_string()
        .into_bytes()
}

async fn write_line<W: AsyncWrite + Unpin>(out: &Mutex<W>, mut line: Vec<u8>) -> io::Result<()> {
    line.push(b'\n');
    let mut out = out.lock().await;
    out.write_all(&line).await?;
    out.flush().await
}

impl<R, W> Transport<RoleServer> for Lines<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), io::Error>> + Send + 'static {
        let out = self.out.clone();
        async move {
            let line = serde_json::to_vec(&item).map_err(io::Error::other)?;
            write_line(&out, line).await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            while self.answers.try_join_next().is_some() {}
            let reply = match self.next_line().await? {
                Err(()) => answer(
                    Value::Null,
                    INVALID_REQUEST,
                    &format!("Invalid Request: the message is over {LINE_LIMIT} bytes"),
                ),
                Ok(line) => match read_line(&line) {
                    Incoming::Message(message) => return Some(*message),
                    Incoming::Nothing => continue,
                    Incoming::Answer(reply) => reply,
                },
            };
            let out = self.out.clone();
            self.answers.spawn(async move {
                // A client that has gone cannot be answered.
                let _ = write_line(&out, reply).await;
            });
        }
    }

    async fn close(&mut self) -> Result<(), io::Error> {
        while self.answers.join_next().await.is_some() {}
        self.out.lock().await.flush().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answered(line: &str) -> Value {
        match read_line(line.as_bytes()) {
            Incoming::Answer(bytes) => serde_json::from_slice(&bytes).unwrap(),
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn a_line_that_is_not_json_is_a_parse_error_with_a_null_id() {
        for line in [
            "not json",
            "{\"jsonrpc\": \"2.0\", \"id\": 1,",
            "\u{fffd}\u{0}x",
        ] {
            let v = answered(line);
            assert_eq!(v["error"]["code"], -32700, "{line}: {v}");
            assert_eq!(v["jsonrpc"], "2.0");
            assert!(
                v.as_object().unwrap().contains_key("id") && v["id"].is_null(),
                "{v}"
            );
        }
        assert!(matches!(
            read_line(b"\xff\xfe{}"),
            Incoming::Answer(a) if a.starts_with(b"{") && String::from_utf8_lossy(&a).contains("-32700")
        ));
    }

    #[test]
    fn a_call_whose_arguments_are_not_an_object_is_invalid_params_with_its_id() {
        let v = answered(
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"claim_check","arguments":"{\"base\":\"main\"}"}}"#,
        );
        assert_eq!(v["id"], 7);
        assert_eq!(v["error"]["code"], -32602);
        let message = v["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("`params.arguments` is a string"),
            "{message}"
        );
        for (params, says) in [
            (r#""x""#, "`params` is a string"),
            (r#"{"arguments":{}}"#, "`params.name`"),
            (r#"{"name":"explain","arguments":[1]}"#, "is an array"),
        ] {
            let line =
                format!(r#"{{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{params}}}"#);
            let v = answered(&line);
            assert_eq!(
                (v["id"].as_str(), v["error"]["code"].as_i64()),
                (Some("a"), Some(-32602)),
                "{v}"
            );
            assert!(
                v["error"]["message"].as_str().unwrap().contains(says),
                "{v}"
            );
        }
    }

    #[test]
    fn messages_go_on_and_other_json_is_an_invalid_request() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"explain","arguments":{"criterion":"x"}}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"acceptance_tags"}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}\r\n",
        ] {
            assert!(
                matches!(read_line(line.as_bytes()), Incoming::Message(_)),
                "{line}"
            );
        }
        assert!(matches!(read_line(b"  \r\n"), Incoming::Nothing));
        let v = answered(r#"{"foo": "bar"}"#);
        assert_eq!(
            (v["id"].clone(), v["error"]["code"].as_i64()),
            (Value::Null, Some(-32600))
        );
        let v = answered(r#"{"jsonrpc":"2.0","id":9,"method":42}"#);
        assert_eq!(
            (v["id"].clone(), v["error"]["code"].as_i64()),
            (json!(9), Some(-32600))
        );
    }

    /// The transport itself: answers go out as whole lines among the server's, good lines
    /// come through, and an over-long line is answered and skipped to its end.
    #[tokio::test]
    async fn the_transport_answers_bad_lines_and_passes_good_ones() {
        let big = format!("{}\n", "x".repeat(LINE_LIMIT + 10));
        let input = format!(
            "not json\n{big}{}\n{{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{{\"name\":\"t\",\"arguments\":\"s\"}}}}\n",
            r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#
        );
        let (client, server_out) = tokio::io::duplex(1 << 16);
        let mut lines = Lines::new(input.as_bytes(), server_out);
        let first = lines.receive().await.expect("the ping");
        assert!(format!("{first:?}").contains("Ping"), "{first:?}");
        assert!(lines.receive().await.is_none(), "the end of the input");
        lines.close().await.unwrap();
        drop(lines);
        let mut written = String::new();
        let mut client = client;
        client.read_to_string(&mut written).await.unwrap();
        let codes: Vec<(Value, i64)> = written
            .lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                (v["id"].clone(), v["error"]["code"].as_i64().unwrap())
            })
            .collect();
        assert_eq!(
            codes,
            [
                (Value::Null, -32700),
                (Value::Null, -32600),
                (json!(5), -32602)
            ]
        );
    }
}
