//! Keys written twice in one object, by path. Plain parsing would keep the last value
//! silently, hiding a mistake, so the loader reports each; but a path can be long and a
//! document can repeat a key a million times, so only the first few are written out.

use std::cell::{Cell, RefCell};

use super::error::Errors;
use super::error::Step;

/// The most repeated keys of one document written out as paths; the rest are counted.
pub(crate) const MAX_REPEAT_PATHS: usize = 100;

/// The repeated keys found so far, in document order.
#[derive(Debug, Default)]
pub(crate) struct Duplicates {
    paths: RefCell<Vec<String>>,
    /// Paths written out so far, including those already taken with [`Self::since`].
    written: Cell<usize>,
    /// Repeats found after [`MAX_REPEAT_PATHS`] were written out.
    unlisted: Cell<usize>,
}

impl Duplicates {
    /// Notes the repeated key at `at`.
    pub(crate) fn note(&self, at: Step<'_>) {
        if self.written.get() < MAX_REPEAT_PATHS {
            self.written.set(self.written.get() + 1);
            self.paths.borrow_mut().push(at.path());
        } else {
            self.unlisted.set(self.unlisted.get() + 1);
        }
    }

    /// A mark to take the paths noted after it with [`Self::since`].
    pub(crate) fn mark(&self) -> usize {
        self.paths.borrow().len()
    }

    /// The paths noted since `mark`, taken out.
    pub(crate) fn since(&self, mark: usize) -> Vec<String> {
        let mut paths = self.paths.borrow_mut();
        let mark = mark.min(paths.len());
        paths.split_off(mark)
    }

    /// Whether no repeat was found (listed or not).
    pub(crate) fn is_empty(&self) -> bool {
        self.written.get() == 0 && self.unlisted.get() == 0
    }

    /// Reports the paths still held and the count of unlisted repeats; the count goes at
    /// `at` (the value they were found in).
    pub(crate) fn report(self, errors: &mut Errors, at: &str) {
        list(&self.paths.into_inner(), errors);
        let unlisted = self.unlisted.get();
        if unlisted > 0 {
            errors.push(at, format!("{unlisted} more duplicate fields, not listed"));
        }
    }

    /// The paths still held, and how many repeats were not written out.
    #[cfg(test)]
    pub(crate) fn into_parts(self) -> (Vec<String>, usize) {
        (self.paths.into_inner(), self.unlisted.get())
    }
}

/// Reports each of `paths` as a repeated key.
pub(crate) fn list(paths: &[String], errors: &mut Errors) {
    for path in paths {
        errors.push(path, DUPLICATE);
    }
}

/// What a repeated key is told.
const DUPLICATE: &str = "duplicate field; only the last value would count";
