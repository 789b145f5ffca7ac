//! Tokens as the macro expander sees them: a spelling, where it came from,
//! and the set of macros that must not expand it again.

use std::rc::Rc;

use lockstep_source::Span;

use crate::lexer::RawKind;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Ident,
    Number,
    Str,
    Char,
    Punct,
    Other,
    /// Stands for an empty macro argument next to `##`; removed after substitution.
    Placemarker,
}

impl Kind {
    pub(crate) fn from_raw(kind: RawKind) -> Kind {
        match kind {
            RawKind::Ident => Kind::Ident,
            RawKind::Number => Kind::Number,
            RawKind::Str => Kind::Str,
            RawKind::Char => Kind::Char,
            RawKind::Punct => Kind::Punct,
            _ => Kind::Other,
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Token {
    pub kind: Kind,
    pub text: Rc<str>,
    pub span: Span,
    pub space_before: bool,
    /// `text` is exactly the source text at `span`, so the output can map
    /// offset for offset.
    pub exact: bool,
    pub hide: HideSet,
}

impl Token {
    pub(crate) fn is_punct(&self, p: &str) -> bool {
        self.kind == Kind::Punct && &*self.text == p
    }

    pub(crate) fn is_ident(&self, name: &str) -> bool {
        self.kind == Kind::Ident && &*self.text == name
    }
}

/// The macros whose expansion produced a token (Prosser's hide set): a token
/// is never expanded by a macro in its set, which makes recursion terminate.
/// Sets are tiny, so a shared vector beats a hash set.
#[derive(Clone, Debug, Default)]
pub(crate) struct HideSet(Option<Rc<Vec<Rc<str>>>>);

impl HideSet {
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.0.as_ref().is_some_and(|v| v.iter().any(|n| &**n == name))
    }

    pub(crate) fn with(&self, name: &Rc<str>) -> HideSet {
        if self.contains(name) {
            return self.clone();
        }
        let mut v = self.0.as_ref().map(|v| v.as_ref().clone()).unwrap_or_default();
        v.push(name.clone());
        HideSet(Some(Rc::new(v)))
    }

    pub(crate) fn union(&self, other: &HideSet) -> HideSet {
        match (&self.0, &other.0) {
            (None, _) => other.clone(),
            (_, None) => self.clone(),
            (Some(_), Some(v)) => v.iter().fold(self.clone(), |acc, n| acc.with(n)),
        }
    }

    pub(crate) fn intersect(&self, other: &HideSet) -> HideSet {
        let (Some(a), Some(_)) = (&self.0, &other.0) else { return HideSet::default() };
        let v: Vec<Rc<str>> = a.iter().filter(|n| other.contains(n)).cloned().collect();
        if v.is_empty() {
            HideSet::default()
        } else {
            HideSet(Some(Rc::new(v)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hide_set_operations() {
        let a: Rc<str> = Rc::from("A");
        let b: Rc<str> = Rc::from("B");
        let ab = HideSet::default().with(&a).with(&b);
        let b_only = HideSet::default().with(&b);
        assert!(ab.contains("A") && ab.contains("B") && !b_only.contains("A"));
        let i = ab.intersect(&b_only);
        assert!(i.contains("B") && !i.contains("A"));
        assert!(b_only.union(&ab).contains("A"));
        assert!(!HideSet::default().intersect(&ab).contains("A"));
    }
}
