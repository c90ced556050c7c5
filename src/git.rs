//! git
