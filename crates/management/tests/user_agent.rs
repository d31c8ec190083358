//! Every request names the topograph process that sent it in its `User-Agent`.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use topograph_management::ManagementCluster;

fn kubeconfig(server: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {server}\n\
         users:\n- name: u\n  user: {{}}\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\n\
         current-context: c\n"
    )
}

#[tokio::test]
async fn requests_carry_the_process_user_agent() {
    topograph_management::user_agent::set("topograph-test", "9.9.9");
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = listener.local_addr().expect("address");
    // An API server that answers every request 404 and reports the first request's head.
    let head = tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.expect("a request");
        let mut seen = Vec::new();
        let mut buffer = [0u8; 4096];
        while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = stream.read(&mut buffer).await.expect("read");
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buffer[..n]);
        }
        let body = r#"{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}"#;
        let reply = format!(
            "HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = stream.write_all(reply.as_bytes()).await;
        String::from_utf8_lossy(&seen).to_string()
    });
    let api = ManagementCluster::from_kubeconfig_yaml(&kubeconfig(&format!("http://{address}")))
        .await
        .expect("client");
    // The answer does not matter, only what was sent.
    let _ = api.get("v1", "Secret", "default", "x").await;
    let head = head.await.expect("the server saw a request").to_lowercase();
    assert!(
        head.contains("\r\nuser-agent: topograph-test/9.9.9\r\n"),
        "{head}"
    );
}
