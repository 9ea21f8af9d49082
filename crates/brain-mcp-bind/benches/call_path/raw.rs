//! The raw floor: a plain pooled hyper client replaying our client's recorded requests.
//!
//! It does only what any client must: send each request in sequence, read each body to the
//! end, and carry the `Mcp-Session-Id` from the `initialize` reply to the later requests.
//! No JSON is parsed and nothing is validated.

use bytes::Bytes;
use http::header::{CONTENT_LENGTH, HOST, HeaderValue};
use http::{Request, Uri};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use crate::capture::Captured;

const SESSION: &str = "mcp-session-id";

/// The exchanges of one call, in order.
#[derive(Clone, Debug)]
pub enum Plan {
    /// `initialize`, `notifications/initialized`, `tools/call`, `DELETE`.
    Handshake {
        /// The four requests in that order.
        steps: Box<[Captured; 4]>,
    },
    /// One `tools/call`.
    Stateless {
        /// The request.
        call: Captured,
    },
}

impl Plan {
    /// Picks the requests of one call out of a recording (the last of each kind).
    pub fn from_recording(requests: &[Captured], handshake: bool) -> Self {
        let last = |role: &str| {
            requests
                .iter()
                .rev()
                .find(|r| r.role() == role)
                .cloned()
                .unwrap_or_else(|| panic!("the recording holds no {role} request"))
        };
        if handshake {
            Self::Handshake {
                steps: Box::new([
                    last("initialize"),
                    last("notifications/initialized"),
                    last("tools/call"),
                    last("DELETE"),
                ]),
            }
        } else {
            Self::Stateless {
                call: last("tools/call"),
            }
        }
    }

    /// How many HTTP exchanges one call makes.
    pub fn exchanges(&self) -> usize {
        match self {
            Self::Handshake { .. } => 4,
            Self::Stateless { .. } => 1,
        }
    }
}

/// A pooled hyper client bound to one endpoint and one plan.
pub struct RawClient {
    client: Client<HttpConnector, Full<Bytes>>,
    url: Uri,
    plan: Plan,
}

impl RawClient {
    /// A client for `url` (plain http) replaying `plan`.
    pub fn new(url: &str, plan: Plan) -> Self {
        let mut http = HttpConnector::new();
        http.set_nodelay(true);
        let client = Client::builder(TokioExecutor::new()).build(http);
        Self {
            client,
            url: url.parse().expect("server URL"),
            plan,
        }
    }

    /// Runs one call's exchanges; returns the bytes of the `tools/call` reply body.
    pub async fn call(&self) -> usize {
        match &self.plan {
            Plan::Handshake { steps } => {
                let (session, _) = self.send(&steps[0], None).await;
                let session = session.expect("initialize reply carries a session id");
                self.send(&steps[1], Some(&session)).await;
                let (_, n) = self.send(&steps[2], Some(&session)).await;
                self.send(&steps[3], Some(&session)).await;
                n
            }
            Plan::Stateless { call } => self.send(call, None).await.1,
        }
    }

    /// Sends `req` (with `session` in place of the recorded session id) and reads the reply
    /// to its end; returns the reply's session id header and the body length.
    async fn send(
        &self,
        req: &Captured,
        session: Option<&HeaderValue>,
    ) -> (Option<HeaderValue>, usize) {
        let mut builder = Request::builder()
            .method(req.method.clone())
            .uri(self.url.clone());
        for (name, value) in &req.headers {
            if name == HOST || name == CONTENT_LENGTH {
                continue; // hyper writes these itself, as it did for our client
            }
            match (name.as_str(), session) {
                (SESSION, Some(s)) => builder = builder.header(name, s),
                _ => builder = builder.header(name, value),
            }
        }
        let request = builder
            .body(Full::new(req.body.clone()))
            .expect("a valid request");
        let response = self.client.request(request).await.expect("raw request");
        assert!(
            response.status().is_success(),
            "raw {} answered {}",
            req.role(),
            response.status()
        );
        let session = response.headers().get(SESSION).cloned();
        let body = response
            .into_body()
            .collect()
            .await
            .expect("raw reply body");
        (session, body.to_bytes().len())
    }
}
