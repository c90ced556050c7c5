//! What the chat-completions judge tests ask and of whom: a judge request for one criterion,
//! and the spec of a judge of a loopback endpoint (`super::chat_server`). For
//! `tests/integration/judge_chat.rs`.

use std::time::Duration;

use shipmoor::acceptance::Lane;
use shipmoor::format::judge::{Request, RequestCriterion, RequestFloor, REQUEST_SCHEMA};
use shipmoor::git::CommitId;
use shipmoor::judge::{JudgeSpec, Transport};
use shipmoor::verdict::FloorResult;

const BASE: &str = "1111111111111111111111111111111111111111";
const HEAD: &str = "2222222222222222222222222222222222222222";

pub fn request(id: &str) -> Request {
    Request {
        schema: REQUEST_SCHEMA.to_string(),
        criterion: RequestCriterion {
            id: id.to_string(),
            ac: format!("The change does {id}."),
            required: true,
            lane: Lane::Judge,
            tag: format!("AC-{}-0000", id.to_ascii_uppercase()),
        },
        repo: "https://github.com/shipmoor/example".to_string(),
        base: CommitId::parse(BASE).unwrap().into(),
        head: CommitId::parse(HEAD).unwrap().into(),
        changed_files: vec!["src/refund.py".to_string()],
        diff: "diff --git a/src/refund.py b/src/refund.py\n+    return order\n".to_string(),
        diff_truncated: false,
        floor: RequestFloor {
            result: FloorResult::NotApplicable,
            reason: "a judgment criterion".to_string(),
        },
    }
}

pub fn spec(
    url: &str,
    api_key_env: Option<&str>,
    timeout: Duration,
    concurrency: usize,
) -> JudgeSpec {
    JudgeSpec {
        name: "intent".to_string(),
        transport: Transport::Chat {
            url: url.to_string(),
            model: "loopback-model".to_string(),
            api_key_env: api_key_env.map(str::to_string),
        },
        timeout,
        concurrency,
        max_diff_bytes: 200_000,
        exclude: Vec::new(),
        file: ".shipmoor/acceptance.yaml".to_string(),
        line: 3,
    }
}

pub const SECONDS: Duration = Duration::from_secs(30);
