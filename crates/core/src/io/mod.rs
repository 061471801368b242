//! Fast readers for large input files.

pub mod swf;
