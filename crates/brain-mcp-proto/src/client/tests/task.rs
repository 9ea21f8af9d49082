//! Tasks: every decision of the task loop, from the statuses a server sends.

use std::time::Duration;

use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::{identity, json as parse, msg};
use crate::client::task::{
    Next, POLL_CEILING, POLL_DEFAULT, POLL_FLOOR, Status, TASK_ID_LIMIT, Task, says_task_required,
};
use crate::client::{Action, Call, CallError, CallRequest, Carrier, Framing, RpcError};
use crate::jsonrpc::{ErrorCode, RequestId};
use crate::mcp::CallToolResult;
use crate::version::ProtocolVersion;

fn raw(value: Value) -> Box<RawValue> {
    serde_json::value::to_raw_value(&value).unwrap()
}

fn session() -> Framing {
    Framing::Handshake {
        session: Some("sid".into()),
        version: Some(ProtocolVersion::V2025_11_25),
    }
}

fn created(status: &str, interval: Value) -> Task {
    let answer = json!({"task": {"taskId": "t-1", "status": status, "ttl": 60000,
        "createdAt": "2026-01-01T00:00:00Z", "pollInterval": interval,
        "statusMessage": "Gathering sources..."}});
    Task::from_call_result(&raw(answer), &session())
        .expect("a task")
        .expect("readable")
}

fn status(status: &str, message: Option<&str>) -> Box<RawValue> {
    let mut value = json!({"taskId": "t-1", "status": status, "pollInterval": 500});
    if let Some(message) = message {
        value["statusMessage"] = json!(message);
    }
    raw(value)
}

#[test]
fn a_call_that_asks_gets_its_task_and_one_that_does_not_gets_a_result() {
    let args = Map::new();
    let mut request = CallRequest::new("research", &args, "c-1");
    request.task = Some(Some(60_000));
    let (mut call, out) = Call::start(
        session(),
        Carrier::Http,
        RequestId::Number(3),
        &request,
        &identity(),
    );
    assert_eq!(parse(&out.body)["params"]["task"], json!({"ttl": 60000}));
    call.handle(msg(
        r#"{"jsonrpc":"2.0","id":3,"result":{"task":{"taskId":"t-1","status":"working"}}}"#,
    ));
    let actions: Vec<Action> = std::iter::from_fn(|| call.poll()).collect();
    assert!(
        matches!(&actions[..], [Action::Task(task)] if task.id() == "t-1"),
        "{actions:?}"
    );
    // Not asked: no `task` param, and an answer is read as a result.
    let request = CallRequest::new("research", &args, "c-2");
    let (mut call, out) = Call::start(
        session(),
        Carrier::Http,
        RequestId::Number(4),
        &request,
        &identity(),
    );
    assert!(parse(&out.body)["params"].get("task").is_none());
    call.handle(msg(r#"{"jsonrpc":"2.0","id":4,"result":{"content":[]}}"#));
    assert!(matches!(call.poll(), Some(Action::Finished(Ok(_)))));
    // The 2026 era asks through the extension, not the param.
    let mut request = CallRequest::new("research", &args, "c-3");
    request.task = Some(None);
    let stateless = Framing::Stateless(ProtocolVersion::V2026_07_28);
    let (_, out) = Call::start(
        stateless,
        Carrier::Http,
        RequestId::Number(5),
        &request,
        &identity(),
    );
    assert!(parse(&out.body)["params"].get("task").is_none());
}

#[test]
fn polls_at_the_servers_interval_held_between_floor_and_ceiling() {
    let wait = |interval: Value| match created("working", interval).start() {
        Next::Poll(wait) => wait,
        other => panic!("{other:?}"),
    };
    assert_eq!(wait(json!(1500)), Duration::from_millis(1500));
    assert_eq!(wait(json!(0)), POLL_FLOOR);
    assert_eq!(wait(json!(-5)), POLL_FLOOR);
    assert_eq!(wait(json!(3_600_000)), POLL_CEILING);
    assert_eq!(wait(json!(1e300)), POLL_CEILING);
    assert_eq!(wait(json!("soon")), POLL_DEFAULT);
    assert_eq!(wait(Value::Null), POLL_DEFAULT);
}

#[test]
fn each_status_decides_the_next_step() {
    let mut task = created("working", json!(1000));
    assert!(
        matches!(task.handle_status(&status("working", None)), Next::Poll(d) if d == Duration::from_millis(500))
    );
    assert!(matches!(
        task.handle_status(&status("input_required", None)),
        Next::InputRequired
    ));
    assert!(matches!(
        task.handle_status(&status("completed", None)),
        Next::Fetch
    ));
    assert_eq!(task.status(), &Status::Completed);
    assert!(matches!(
        task.handle_status(&status("failed", None)),
        Next::Fetch
    ));
    let cancelled = task.handle_status(&status("cancelled", None));
    assert!(
        matches!(cancelled, Next::Finished(Err(CallError::Protocol(_)))),
        "{cancelled:?}"
    );
    // Another task's status, an unknown status, garbage: the server's protocol error.
    let other = raw(json!({"taskId": "t-2", "status": "working"}));
    assert!(matches!(
        task.handle_status(&other),
        Next::Finished(Err(CallError::Protocol(_)))
    ));
    let odd = raw(json!({"taskId": "t-1", "status": "sleeping"}));
    assert!(matches!(
        task.handle_status(&odd),
        Next::Finished(Err(CallError::Protocol(_)))
    ));
    let garbage = raw(json!({"status": "working"}));
    assert!(matches!(
        task.handle_status(&garbage),
        Next::Finished(Err(CallError::Protocol(_)))
    ));
}

#[test]
fn the_2026_extension_carries_the_outcome_in_the_status() {
    let created = raw(
        json!({"resultType": "task", "taskId": "t-9", "status": "working",
        "pollIntervalMs": 2000, "ttlMs": null}),
    );
    let mut task =
        Task::from_call_result(&created, &Framing::Stateless(ProtocolVersion::V2026_07_28))
            .unwrap()
            .unwrap();
    assert!(matches!(task.start(), Next::Poll(d) if d == Duration::from_secs(2)));
    let done = raw(json!({"taskId": "t-9", "status": "completed",
        "result": {"content": [{"type": "text", "text": "done"}], "resultType": "complete"}}));
    match task.handle_status(&done) {
        Next::Finished(Ok(result)) => assert_eq!(result.content.len(), 1),
        other => panic!("{other:?}"),
    }
    let failed = raw(json!({"taskId": "t-9", "status": "failed",
        "error": {"code": -32603, "message": "it broke"}}));
    match task.handle_status(&failed) {
        Next::Finished(Err(CallError::Rpc { error, .. })) => {
            assert_eq!(error.code, ErrorCode(-32603));
            assert_eq!(error.message, "it broke");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_status_message_is_news_once_and_whole() {
    let mut task = created("working", json!(1000));
    assert_eq!(task.news().as_deref(), Some("Gathering sources..."));
    assert_eq!(task.news(), None);
    task.handle_status(&status("working", Some("Gathering sources...")));
    assert_eq!(task.news(), None, "the same message again is no news");
    task.handle_status(&status("working", None));
    assert_eq!(task.news(), None, "no message keeps the last one");
    let long = "x".repeat(10_000);
    task.handle_status(&status("working", Some(&long)));
    // Whole: the driver redacts it, then cuts it (a cut first could split a secret).
    assert_eq!(task.news().map(|m| m.len()), Some(10_000));
}

#[test]
fn task_requests_name_the_task_and_only_polls_are_repeatable() {
    let task = created("working", json!(1000));
    let get = task.get(&session(), RequestId::Number(8), &identity());
    assert_eq!(get.method, "tasks/get");
    assert!(get.idempotent);
    assert_eq!(parse(&get.body)["params"], json!({"taskId": "t-1"}));
    let fetch = task.fetch(&session(), RequestId::Number(9), &identity());
    assert_eq!((fetch.method, fetch.idempotent), ("tasks/result", true));
    let cancel = task.cancel(&session(), RequestId::Number(10), &identity());
    assert_eq!((cancel.method, cancel.idempotent), ("tasks/cancel", false));
    // 2026: Mcp-Name carries the task id, `_meta` the request's protocol fields.
    let stateless = Framing::Stateless(ProtocolVersion::V2026_07_28);
    let get = task.get(&stateless, RequestId::Number(11), &identity());
    let names: Vec<(String, String)> = get
        .headers
        .iter()
        .map(|h| (h.name.to_string(), h.value.to_string()))
        .collect();
    assert!(
        names.contains(&("mcp-name".into(), "t-1".into())),
        "{names:?}"
    );
    let body = parse(&get.body);
    assert_eq!(
        body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
}

#[test]
fn an_oversized_or_empty_task_id_is_refused() {
    for id in [String::new(), "x".repeat(TASK_ID_LIMIT + 1)] {
        let answer = raw(json!({"task": {"taskId": id, "status": "working"}}));
        assert!(matches!(
            Task::from_call_result(&answer, &session()),
            Some(Err(CallError::Protocol(_)))
        ));
    }
    // A result with content is a result, whatever else it holds.
    let result = raw(json!({"content": [], "task": {"taskId": "t", "status": "working"}}));
    assert!(Task::from_call_result(&result, &session()).is_none());
}

#[test]
fn the_answers_that_say_a_task_is_required() {
    let rpc = |code: i64, message: &str| CallError::Rpc {
        error: RpcError::new(ErrorCode(code), message),
        forget_era: false,
    };
    let missing = |data: Value| CallError::Rpc {
        error: RpcError {
            data: Some(raw(data)),
            ..RpcError::new(ErrorCode(-32021), "missing capability")
        },
        forget_era: false,
    };
    let tasks =
        json!({"requiredCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}});
    assert!(says_task_required(Err(&missing(tasks))));
    let elicitation = json!({"requiredCapabilities": {"elicitation": {}}});
    assert!(
        !says_task_required(Err(&missing(elicitation))),
        "another capability"
    );
    assert!(!says_task_required(Err(&rpc(-32021, "missing capability"))));
    assert!(says_task_required(Err(&rpc(
        -32601,
        "Tool x requires task augmentation"
    ))));
    assert!(says_task_required(Err(&rpc(
        -32600,
        "requires Task Augmentation"
    ))));
    assert!(!says_task_required(Err(&rpc(-32601, "Method not found"))));
    assert!(!says_task_required(Err(&rpc(-32603, "task augmentation"))));
    let wrapped: CallToolResult = serde_json::from_value(json!({"isError": true, "content": [
        {"type": "text", "text": "MCP error -32601: Tool x requires task augmentation (taskSupport: 'required')"}]}))
    .unwrap();
    assert!(says_task_required(Ok(&wrapped)));
    let fine: CallToolResult = serde_json::from_value(json!({"content": [
        {"type": "text", "text": "requires task augmentation"}]}))
    .unwrap();
    assert!(
        !says_task_required(Ok(&fine)),
        "only an error result says so"
    );
}

#[test]
fn a_fetched_result_keeps_the_rules_of_its_era() {
    let task = created("completed", json!(1000));
    // A null structured value is none; in a session, one that is not an object is refused.
    let null = raw(json!({"content": [], "structuredContent": null}));
    assert!(
        task.read_fetched(&null)
            .unwrap()
            .structured_content
            .is_none()
    );
    let array = raw(json!({"content": [], "structuredContent": [1]}));
    assert!(matches!(
        task.read_fetched(&array),
        Err(CallError::Protocol(_))
    ));
    let asks = raw(json!({"resultType": "input_required", "inputRequests": {}}));
    assert!(matches!(
        task.read_fetched(&asks),
        Err(CallError::Protocol(_))
    ));
}

#[test]
fn every_2026_call_declares_the_extension_and_takes_a_task_answer() {
    let args = Map::new();
    let request = CallRequest::new("research", &args, "c-1");
    let stateless = || Framing::Stateless(ProtocolVersion::V2026_07_28);
    let (mut call, out) = Call::start(
        stateless(),
        Carrier::Http,
        RequestId::Number(3),
        &request,
        &identity(),
    );
    let body = parse(&out.body);
    let declared = &body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"];
    assert_eq!(
        declared["extensions"]["io.modelcontextprotocol/tasks"],
        json!({})
    );
    call.handle(msg(
        r#"{"jsonrpc":"2.0","id":3,"result":{"resultType":"task","taskId":"t-7","status":"working","createdAt":"x","lastUpdatedAt":"x","ttlSeconds":60,"pollIntervalMilliseconds":1500,"requestState":"s-1","result":{"content":[]}}}"#,
    ));
    let mut task = match call.poll() {
        Some(Action::Task(task)) => task,
        other => panic!("{other:?}"),
    };
    // A created task's claimed outcome is not used; its interval and state are.
    assert!(matches!(task.start(), Next::Poll(d) if d == Duration::from_millis(1500)));
    let get = task.get(&stateless(), RequestId::Number(4), &identity());
    assert_eq!(parse(&get.body)["params"]["requestState"], "s-1");
    // The most recent state is echoed; none when the last status had none.
    task.handle_status(&raw(
        json!({"taskId": "t-7", "status": "working", "requestState": "s-2"}),
    ));
    let get = task.get(&stateless(), RequestId::Number(5), &identity());
    assert_eq!(parse(&get.body)["params"]["requestState"], "s-2");
    task.handle_status(&raw(json!({"taskId": "t-7", "status": "working"})));
    let cancel = task.cancel(&stateless(), RequestId::Number(6), &identity());
    assert!(parse(&cancel.body)["params"].get("requestState").is_none());
    // A state too long to echo is the server's protocol error.
    let huge =
        raw(json!({"taskId": "t-7", "status": "working", "requestState": "s".repeat(20_000)}));
    assert!(matches!(
        task.handle_status(&huge),
        Next::Finished(Err(CallError::Protocol(_)))
    ));
    // Any other unknown resultType is still refused.
    let (mut call, _) = Call::start(
        stateless(),
        Carrier::Http,
        RequestId::Number(8),
        &request,
        &identity(),
    );
    call.handle(msg(
        r#"{"jsonrpc":"2.0","id":8,"result":{"resultType":"later"}}"#,
    ));
    assert!(matches!(
        call.poll(),
        Some(Action::Finished(Err(CallError::Protocol(_))))
    ));
}

#[test]
fn questions_go_to_a_client_that_answers_each_once() {
    let stateless = || Framing::Stateless(ProtocolVersion::V2026_07_28);
    let created = raw(json!({"resultType": "task", "taskId": "t-q", "status": "working"}));
    let asking = raw(
        json!({"taskId": "t-q", "status": "input_required", "requestState": "r",
        "inputRequests": {"q1": {"method": "elicitation/create", "params": {"message": "which?"}}}}),
    );
    // A client without a responder: the call ends.
    let mut silent = Task::from_call_result(&created, &stateless())
        .unwrap()
        .unwrap();
    assert!(matches!(silent.handle_status(&asking), Next::InputRequired));
    // With one: the question once, however often the server repeats it.
    let mut task = Task::from_call_result(&created, &stateless())
        .unwrap()
        .unwrap()
        .answering(true);
    let questions = match task.handle_status(&asking) {
        Next::Answer(questions) => questions,
        other => panic!("{other:?}"),
    };
    assert_eq!(questions.len(), 1);
    assert_eq!(
        (questions[0].key.as_str(), questions[0].method.as_str()),
        ("q1", "elicitation/create")
    );
    // Until the server takes the answers, a repeated status asks again.
    assert!(matches!(task.handle_status(&asking), Next::Answer(q) if q.len() == 1));
    let answers = vec![
        ("q1".to_owned(), Ok(json!({"action": "accept"}))),
        (
            "q2".to_owned(),
            Err(crate::client::Refusal::new(ErrorCode(-32601), "no")),
        ),
    ];
    let update = task.update(&stateless(), RequestId::Number(9), &identity(), &answers);
    assert_eq!(update.method, "tasks/update");
    let params = &parse(&update.body)["params"];
    assert_eq!(params["taskId"], "t-q");
    assert_eq!(params["requestState"], "r");
    assert_eq!(params["inputResponses"]["q1"], json!({"action": "accept"}));
    assert_eq!(params["inputResponses"]["q2"]["error"]["code"], -32601);
    // Sent again under a new id, the same answers.
    let again = task.update(&stateless(), RequestId::Number(10), &identity(), &answers);
    assert_eq!(
        parse(&again.body)["params"]["inputResponses"],
        params["inputResponses"]
    );
    assert!(matches!(task.resume(["q1", "q2"]), Next::Poll(_)));
    assert!(
        matches!(task.handle_status(&asking), Next::Poll(_)),
        "answered already"
    );
    // In a session the questions come on the result's stream: fetch it.
    let mut session_task = created_answering();
    let status = raw(json!({"taskId": "t-1", "status": "input_required"}));
    assert!(matches!(session_task.handle_status(&status), Next::Fetch));
    // A server that never stops asking new questions is stopped.
    let mut greedy = Task::from_call_result(&created, &stateless())
        .unwrap()
        .unwrap()
        .answering(true);
    let mut ended = false;
    for i in 0..100 {
        let ask = raw(json!({"taskId": "t-q", "status": "input_required",
            "inputRequests": {format!("k{i}"): {"method": "elicitation/create"}}}));
        match greedy.handle_status(&ask) {
            Next::Finished(Err(CallError::Protocol(_))) => {
                ended = true;
                break;
            }
            // Answers the server never takes count as much as taken ones.
            Next::Answer(_) => {}
            other => panic!("{other:?}"),
        }
    }
    assert!(ended, "a bounded number of questions");
}

fn created_answering() -> Task {
    created("working", json!(1000)).answering(true)
}

#[test]
fn a_task_the_call_did_not_ask_for_is_the_servers_protocol_error() {
    let args = Map::new();
    let request = CallRequest::new("plain", &args, "c-1");
    let (mut call, _) = Call::start(
        session(),
        Carrier::Http,
        RequestId::Number(2),
        &request,
        &identity(),
    );
    call.handle(msg(
        r#"{"jsonrpc":"2.0","id":2,"result":{"task":{"taskId":"t","status":"working"}}}"#,
    ));
    assert!(matches!(
        call.poll(),
        Some(Action::Finished(Err(CallError::Protocol(_))))
    ));
}

#[test]
fn a_session_task_that_keeps_asking_through_its_result_is_stopped() {
    let mut task = created_answering();
    let asking = raw(json!({"taskId": "t-1", "status": "input_required"}));
    let mut fetches = 0;
    let ended = loop {
        match task.handle_status(&asking) {
            Next::Fetch => fetches += 1,
            Next::Finished(Err(CallError::Protocol(_))) => break true,
            other => panic!("{other:?}"),
        }
        if fetches > 1000 {
            break false;
        }
    };
    assert!(ended, "bounded");
    assert_eq!(fetches, crate::client::task::MAX_QUESTIONS);
}

#[test]
fn a_2026_task_created_already_ended_is_polled_once_for_its_outcome() {
    let stateless = Framing::Stateless(ProtocolVersion::V2026_07_28);
    let created = raw(json!({"resultType": "task", "taskId": "t-d", "status": "completed"}));
    let mut task = Task::from_call_result(&created, &stateless)
        .unwrap()
        .unwrap();
    // No request fetches a 2026 outcome: the status is read again.
    assert!(matches!(task.start(), Next::Poll(_)));
    let done = raw(json!({"taskId": "t-d", "status": "completed",
        "result": {"content": [{"type": "text", "text": "done"}]}}));
    assert!(matches!(task.handle_status(&done), Next::Finished(Ok(_))));
    // A polled status that ended without its outcome is the server's error, not a loop.
    let mut bare = Task::from_call_result(&created, &stateless)
        .unwrap()
        .unwrap();
    assert!(matches!(bare.start(), Next::Poll(_)));
    let empty = raw(json!({"taskId": "t-d", "status": "completed"}));
    assert!(matches!(
        bare.handle_status(&empty),
        Next::Finished(Err(CallError::Protocol(_)))
    ));
}

#[test]
fn a_fetched_result_reads_progress_under_the_original_calls_token() {
    // A shared child's token is the call's JSON-RPC id, not the call id.
    let mut reading = Call::awaiting(
        session(),
        Carrier::SharedProcess,
        RequestId::Number(12),
        RequestId::Number(7),
        &identity(),
    );
    reading.handle(msg(
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"c-1","progress":1}}"#,
    ));
    reading.handle(msg(
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":2}}"#,
    ));
    reading.handle(msg(r#"{"jsonrpc":"2.0","id":12,"result":{"content":[]}}"#));
    let actions: Vec<Action> = std::iter::from_fn(|| reading.poll()).collect();
    assert!(
        matches!(&actions[..], [Action::Progress(p), Action::Finished(Ok(_))] if p.progress.get() == "2"),
        "{actions:?}"
    );
}
