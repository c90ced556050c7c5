//! A lock directory for installs shared by test processes (nextest runs each test in its own
//! process): removed on drop, taken over when its holder's process is gone.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// A lock directory, removed on drop.
pub struct Lock(PathBuf);

impl Lock {
    pub fn acquire(path: PathBuf) -> Lock {
        let start = Instant::now();
        loop {
            match std::fs::create_dir(&path) {
                Ok(()) => {
                    std::fs::write(path.join("pid"), std::process::id().to_string()).unwrap();
                    return Lock(path);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    if Lock::stale(&path) {
                        let _ = std::fs::remove_dir_all(&path);
                        continue;
                    }
                    assert!(
                        start.elapsed() < Duration::from_secs(900),
                        "waited 15 minutes for the lock {}; remove it if no test run holds it",
                        path.display()
                    );
                    std::thread::sleep(Duration::from_millis(200));
                }
                Err(e) => panic!("cannot create the lock {}: {e}", path.display()),
            }
        }
    }

    /// The holder is gone: its process no longer exists, or it died before writing its pid.
    fn stale(path: &Path) -> bool {
        match std::fs::read_to_string(path.join("pid")) {
            Ok(pid) => {
                Path::new("/proc/self").exists() && !Path::new("/proc").join(pid.trim()).exists()
            }
            Err(_) => std::fs::metadata(path)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| SystemTime::now().duration_since(t).ok())
                .is_some_and(|age| age > Duration::from_secs(60)),
        }
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
