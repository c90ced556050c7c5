#!/usr/bin/env python3
"""A command judge for `shipmoor claim-check --mode full` that forwards each request to an
OpenAI-compatible chat-completions endpoint and prints the endpoint's answer as the response.

Use it as it is, from the acceptance file:

    judge:
      command: ["python3", "examples/judge/forward.py"]

It reads `claim_check.judge.request.v1` on stdin and writes `claim_check.judge.response.v1` on
stdout. Where it sends the request, from the environment:

    SHIPMOOR_JUDGE_URL      the endpoint (default: https://api.openai.com/v1/chat/completions)
    SHIPMOOR_JUDGE_MODEL    the model (default: gpt-4.1-mini)
    SHIPMOOR_JUDGE_KEY_ENV  the name of the variable that holds the key (default: OPENAI_API_KEY;
                            empty for a local server that needs none)

claim-check withholds every variable named like a credential from a command judge: pass the
key's variable deliberately in the project settings, `floor: { env_pass: [OPENAI_API_KEY] }`.

The request carries the change's diff: with a remote endpoint, that diff leaves the machine.
Standard library only. Any failure is printed to stderr and exits non-zero, which claim-check
records as an abstention: this judge never passes anything, and neither does a broken one.
"""
import json
import os
import sys
import urllib.error
import urllib.request

SYSTEM = """You review one acceptance criterion of a code change. The user message is a JSON
request (schema claim_check.judge.request.v1): the criterion, the base and head commits, the
changed files, the unified diff base..head (possibly truncated) and what the deterministic floor
found. Your one job is to find a divergence between the criterion and the code that the floor
could not see, and to point at it.

Answer with one JSON object and nothing else, schema claim_check.judge.response.v1:
{"schema": "claim_check.judge.response.v1", "base": <request base>, "head": <request head>,
 "decision": "block" | "abstain",
 "rationale": "<one or two sentences>",
 "pointer": {"path": "<file at head>", "line": <line at head>, "quote": "<exact text on that line>"},
 "obligations": [{"text": "<what the criterion requires>", "status": "met" | "divergent" | "unclear",
                  "citation": {"path": ..., "line": ..., "quote": ...}}]}

Rules: decompose the criterion into obligations. Answer "block" only when the code at head
clearly diverges from an obligation, and give a pointer whose quote is copied exactly from the
file at that line. Otherwise answer "abstain" and say what a person should check. Never answer
"pass": you cannot approve anything. Echo base and head exactly. Citations are checked; an
invented one discards your block."""


def main() -> int:
    request = json.load(sys.stdin)
    url = os.environ.get("SHIPMOOR_JUDGE_URL", "https://api.openai.com/v1/chat/completions")
    model = os.environ.get("SHIPMOOR_JUDGE_MODEL", "gpt-4.1-mini")
    key_env = os.environ.get("SHIPMOOR_JUDGE_KEY_ENV", "OPENAI_API_KEY")
    headers = {"Content-Type": "application/json"}
    if key_env:
        key = os.environ.get(key_env)
        if not key:
            print(f"forward.py: the variable {key_env} (SHIPMOOR_JUDGE_KEY_ENV) is not set", file=sys.stderr)
            return 2
        headers["Authorization"] = f"Bearer {key}"
    body = {
        "model": model,
        "temperature": 0,
        "response_format": {"type": "json_object"},
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": json.dumps(request)},
        ],
    }
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=110) as r:
            answer = json.load(r)
    except urllib.error.HTTPError as e:
        print(f"forward.py: {url} answered HTTP {e.code}: {e.read()[:500]!r}", file=sys.stderr)
        return 1
    except (urllib.error.URLError, TimeoutError, ValueError) as e:
        print(f"forward.py: {url}: {e}", file=sys.stderr)
        return 1
    try:
        content = answer["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        print(f"forward.py: no message in the answer: {json.dumps(answer)[:500]}", file=sys.stderr)
        return 1
    # claim-check reads the JSON out of the content itself (code fences and leading prose too).
    sys.stdout.write(content if isinstance(content, str) else json.dumps(content))
    return 0


if __name__ == "__main__":
    sys.exit(main())
