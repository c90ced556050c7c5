//! JUnit XML reading (to be written).
