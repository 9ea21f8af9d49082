//! Recording the exact bytes our client sends for one call: a small TCP proxy in front of
//! the test server keeps everything clients write.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A proxy to `upstream` that records what clients send; stops when dropped.
pub(crate) struct Recorder {
    addr: SocketAddr,
    log: Arc<Mutex<Vec<Vec<u8>>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Recorder {
    /// Starts the proxy on 127.0.0.1 (inside a Tokio runtime).
    pub(crate) async fn start(upstream: SocketAddr) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let log: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
        let all = log.clone();
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let index = {
                    let mut all = all
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    all.push(Vec::new());
                    all.len() - 1
                };
                tokio::spawn(pipe(client, upstream, all.clone(), index));
            }
        });
        Ok(Self { addr, log, task })
    }

    /// The endpoint to give the client instead of the server's.
    pub(crate) fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Forgets everything recorded so far.
    pub(crate) fn clear(&self) {
        for conn in self.lock().iter_mut() {
            conn.clear();
        }
    }

    /// What each connection sent since the last [`Recorder::clear`], one after the other.
    pub(crate) fn bytes(&self) -> Vec<u8> {
        self.lock().concat()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Vec<u8>>> {
        self.log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn pipe(
    client: TcpStream,
    upstream: SocketAddr,
    log: Arc<Mutex<Vec<Vec<u8>>>>,
    index: usize,
) {
    let Ok(server) = TcpStream::connect(upstream).await else {
        return;
    };
    let _ = (server.set_nodelay(true), client.set_nodelay(true));
    let (mut client_rd, mut client_wr) = client.into_split();
    let (mut server_rd, mut server_wr) = server.into_split();
    let down = tokio::spawn(async move {
        let _ = tokio::io::copy(&mut server_rd, &mut client_wr).await;
        let _ = client_wr.shutdown().await;
    });
    let mut buf = vec![0u8; 16 * 1024];
    while let Ok(n @ 1..) = client_rd.read(&mut buf).await {
        if let Some(conn) = log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get_mut(index)
        {
            conn.extend_from_slice(&buf[..n]);
        }
        if server_wr.write_all(&buf[..n]).await.is_err() {
            break;
        }
    }
    let _ = server_wr.shutdown().await;
    let _ = down.await;
}
