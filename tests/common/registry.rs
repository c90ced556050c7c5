//! A real OCI registry on loopback for the OCI tests: Debian's `docker-registry` (distribution
//! 2.8.2, which has no referrers API) serving a temporary directory on a free port, optionally
//! taking basic authentication, stopped when dropped; and small images pushed to it with
//! `skopeo` from OCI image layouts built here.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::require_tool;

pub const REGISTRY_BIN: &str = "/usr/bin/docker-registry";

/// Fails the test, naming the Debian packages, when `docker-registry` or `skopeo` is missing.
pub fn require_registry_tools() {
    require_tool(
        REGISTRY_BIN,
        &["--version"],
        "apt-get install docker-registry (Debian's distribution registry)",
    );
    require_tool("skopeo", &["--version"], "apt-get install skopeo");
}

/// A running `docker-registry serve CONFIG`.
pub struct TestRegistry {
    child: Child,
    dir: tempfile::TempDir,
    pub port: u16,
    /// `user:password` when the registry takes basic authentication (skopeo then sends it).
    creds: Option<String>,
}

/// The test registry's one user, for [`TestRegistry::start_with_basic_auth`]: `shipmoor`,
/// password `registry-test`, as an htpasswd line (bcrypt at cost 4, so that the check of each
/// request is quick). A test fixture, never a secret.
pub const HTPASSWD: &str = "shipmoor:$2b$04$a5a12B2mYKT3Mjp4quxcFO0fdqOpnW6jXjVNQ8.SZd9XljIFBU7zu";
pub const USER: &str = "shipmoor";
pub const PASSWORD: &str = "registry-test";

impl TestRegistry {
    pub fn start() -> TestRegistry {
        TestRegistry::serve(None)
    }

    /// A registry that takes only [`USER`] and [`PASSWORD`] (htpasswd basic authentication).
    pub fn start_with_basic_auth() -> TestRegistry {
        TestRegistry::serve(Some(HTPASSWD))
    }

    fn serve(htpasswd: Option<&str>) -> TestRegistry {
        require_registry_tools();
        let dir = tempfile::Builder::new()
            .prefix("cc-registry-")
            .tempdir()
            .expect("temp dir");
        let port = free_port();
        let config = dir.path().join("config.yml");
        let mut text = format!(
            "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: 127.0.0.1:{port}\n",
            dir.path().join("storage").display()
        );
        if let Some(line) = htpasswd {
            let file = dir.path().join("htpasswd");
            std::fs::write(&file, format!("{line}\n")).expect("htpasswd");
            text.push_str(&format!(
                "auth:\n  htpasswd:\n    realm: test\n    path: {}\n",
                file.display()
            ));
        }
        std::fs::write(&config, text).expect("registry config");
        let log = std::fs::File::create(dir.path().join("registry.log")).expect("log");
        let child = Command::new(REGISTRY_BIN)
            .arg("serve")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .expect("docker-registry starts");
        let mut registry = TestRegistry {
            child,
            dir,
            port,
            creds: htpasswd.map(|_| format!("{USER}:{PASSWORD}")),
        };
        registry.wait_ready();
        registry
    }

    /// `127.0.0.1:PORT`.
    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// What the registry logged so far, for failure messages.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("registry.log")).unwrap_or_default()
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().expect("registry status") {
                panic!("docker-registry exited ({status}):\n{}", self.log());
            }
            if let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.port)) {
                let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
                let request = format!(
                    "GET /v2/ HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n\r\n",
                    self.port
                );
                let mut answer = String::new();
                if s.write_all(request.as_bytes()).is_ok()
                    && s.read_to_string(&mut answer).is_ok()
                    && (answer.starts_with("HTTP/1.1 200") || answer.starts_with("HTTP/1.1 401"))
                {
                    return;
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!(
            "docker-registry did not answer on {}:\n{}",
            self.host(),
            self.log()
        );
    }

    /// Pushes a one-layer image whose only file holds `content` to `repo:tag` with
    /// `skopeo copy`; returns its manifest digest (`sha256:…`).
    pub fn push_image(&self, repo: &str, tag: &str, content: &str) -> String {
        let layout = tempfile::tempdir().expect("temp dir");
        let digest = image_layout(layout.path(), tag, content);
        let mut args = vec!["copy", "--quiet", "--dest-tls-verify=false"];
        if let Some(creds) = &self.creds {
            args.extend(["--dest-creds", creds.as_str()]);
        }
        let source = format!("oci:{}:{tag}", layout.path().display());
        let destination = format!("docker://{}/{repo}:{tag}", self.host());
        args.extend([source.as_str(), destination.as_str()]);
        skopeo(&args);
        digest
    }

    /// `skopeo inspect --raw` of `repo:tag_or_@digest`: the manifest or index as stored.
    pub fn inspect_raw(&self, repo_and_ref: &str) -> serde_json::Value {
        let mut args = vec!["inspect", "--raw", "--tls-verify=false"];
        if let Some(creds) = &self.creds {
            args.extend(["--creds", creds.as_str()]);
        }
        let image = format!("docker://{}/{repo_and_ref}", self.host());
        args.push(&image);
        let out = skopeo(&args);
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("skopeo's answer: {e}\n{out}"))
    }
}

impl Drop for TestRegistry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port nothing listens on now (the registry binds it next; nothing else on loopback races
/// for ports chosen by the kernel this way in practice).
pub fn free_port() -> u16 {
    TcpListener::bind(("127.0.0.1", 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Runs skopeo; its stdout, or a panic with its stderr.
pub fn skopeo(args: &[&str]) -> String {
    let out = Command::new("skopeo")
        .args(args)
        .output()
        .expect("skopeo runs");
    assert!(
        out.status.success(),
        "skopeo {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

fn sha256(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// An OCI image layout (image-spec `image-layout.md`) with one image: a gzip'd tar layer
/// holding `hello.txt`, its config, its manifest, `index.json` naming it `tag`, and
/// `oci-layout`. Returns the manifest's digest.
pub fn image_layout(dir: &Path, tag: &str, content: &str) -> String {
    let blobs = dir.join("blobs/sha256");
    std::fs::create_dir_all(&blobs).expect("blobs dir");
    let put = |bytes: &[u8]| -> (String, usize) {
        let digest = sha256(bytes);
        let hex = digest.trim_start_matches("sha256:");
        std::fs::write(blobs.join(hex), bytes).expect("blob");
        (digest, bytes.len())
    };
    let tar = tar_of("hello.txt", content.as_bytes());
    let gz = gzip(&tar);
    let (layer, layer_size) = put(&gz);
    let config = serde_json::json!({
        "architecture": "amd64",
        "os": "linux",
        "config": {},
        "rootfs": {"type": "layers", "diff_ids": [sha256(&tar)]},
    });
    let (config, config_size) = put(config.to_string().as_bytes());
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": config, "size": config_size},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": layer, "size": layer_size}],
    });
    let (manifest, manifest_size) = put(manifest.to_string().as_bytes());
    let index = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [{
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "digest": manifest,
            "size": manifest_size,
            "annotations": {"org.opencontainers.image.ref.name": tag},
        }],
    });
    std::fs::write(dir.join("index.json"), index.to_string()).expect("index.json");
    std::fs::write(dir.join("oci-layout"), r#"{"imageLayoutVersion":"1.0.0"}"#)
        .expect("oci-layout");
    manifest
}

/// A ustar archive of one regular file (POSIX `ustar` header, then the data padded to 512
/// bytes, then two zero blocks).
fn tar_of(name: &str, data: &[u8]) -> Vec<u8> {
    let mut header = [0u8; 512];
    header[..name.len()].copy_from_slice(name.as_bytes());
    let octal = |field: &mut [u8], value: u64| {
        let s = format!("{value:0width$o}", width = field.len() - 1);
        field[..s.len()].copy_from_slice(s.as_bytes());
    };
    octal(&mut header[100..108], 0o644);
    octal(&mut header[108..116], 0);
    octal(&mut header[116..124], 0);
    octal(&mut header[124..136], data.len() as u64);
    octal(&mut header[136..148], 0);
    header[156] = b'0';
    header[257..263].copy_from_slice(b"ustar\0");
    header[263..265].copy_from_slice(b"00");
    // The checksum is computed with its own field read as spaces.
    header[148..156].copy_from_slice(b"        ");
    let sum: u32 = header.iter().map(|b| u32::from(*b)).sum();
    let s = format!("{sum:06o}\0 ");
    header[148..156].copy_from_slice(s.as_bytes());
    let mut out = header.to_vec();
    out.extend_from_slice(data);
    out.resize(out.len().div_ceil(512) * 512, 0);
    out.extend_from_slice(&[0u8; 1024]);
    out
}

/// `gzip -n` of `bytes` (the system's gzip: no crate of ours compresses).
fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut child = Command::new("gzip")
        .args(["-n", "-c"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("gzip runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(bytes)
        .expect("gzip input");
    let out = child.wait_with_output().expect("gzip output");
    assert!(out.status.success(), "gzip failed");
    out.stdout
}

/// A proxy on loopback in front of a registry that cuts answers: each connection carries one
/// request (both sides are told `connection: close`); the answer to a request whose request
/// line `cut` picks goes out as its headers and the first half of its body (its full length
/// promised), then the connection closes. A registry that drops the connection mid-answer.
pub struct CuttingProxy {
    pub port: u16,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// The request lines of the answers cut so far.
    pub cut: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl CuttingProxy {
    pub fn start(upstream: u16, cut: fn(&str) -> bool) -> CuttingProxy {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::{Arc, Mutex};
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let cuts = Arc::new(Mutex::new(Vec::new()));
        let (stopping, cutting) = (Arc::clone(&stop), Arc::clone(&cuts));
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if stopping.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(client) = client else { continue };
                let cutting = Arc::clone(&cutting);
                std::thread::spawn(move || {
                    let _ = relay(client, upstream, cut, &cutting);
                });
            }
        });
        CuttingProxy {
            port,
            stop,
            cut: cuts,
        }
    }
}

impl Drop for CuttingProxy {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// The head (up to and without the blank line) and what was read past it.
fn read_head(stream: &mut TcpStream) -> std::io::Result<(String, Vec<u8>)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
            return Ok((head, buf[end + 4..].to_vec()));
        }
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// The head with its `connection` header replaced by `connection: close`.
fn closing(head: &str) -> String {
    let mut lines: Vec<&str> = head
        .split("\r\n")
        .filter(|l| !l.to_ascii_lowercase().starts_with("connection:"))
        .collect();
    lines.push("connection: close");
    lines.join("\r\n") + "\r\n\r\n"
}

fn content_length(head: &str) -> usize {
    head.split("\r\n")
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().ok())?
        })
        .unwrap_or(0)
}

fn relay(
    mut client: TcpStream,
    upstream: u16,
    cut: fn(&str) -> bool,
    cuts: &std::sync::Mutex<Vec<String>>,
) -> std::io::Result<()> {
    let (head, mut body) = read_head(&mut client)?;
    let want = content_length(&head);
    while body.len() < want {
        let mut chunk = [0u8; 4096];
        let n = client.read(&mut chunk)?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    let request_line = head.lines().next().unwrap_or_default().to_string();
    let mut server = TcpStream::connect(("127.0.0.1", upstream))?;
    server.write_all(closing(&head).as_bytes())?;
    server.write_all(&body)?;
    let (answer_head, mut answer) = read_head(&mut server)?;
    server.read_to_end(&mut answer)?;
    client.write_all(closing(&answer_head).as_bytes())?;
    if cut(&request_line) && !answer.is_empty() {
        cuts.lock().unwrap().push(request_line);
        client.write_all(&answer[..answer.len() / 2])?;
    } else {
        client.write_all(&answer)?;
    }
    client.flush()?;
    client.shutdown(std::net::Shutdown::Both)
}
