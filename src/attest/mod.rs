//! attest
