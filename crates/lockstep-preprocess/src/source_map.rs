//! The map from offsets in the preprocessed text back to original spans, and
//! the output buffer that builds text and map together.

use std::cell::Cell;
use std::ops::Range;

use lockstep_source::{ExpnId, FileId, Span};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    /// Output bytes equal source bytes starting at `lo`, offset for offset.
    Copy { file: FileId, lo: u32, expansion: Option<ExpnId> },
    /// The whole output range stands for this span (a macro-generated token).
    Fixed(Span),
}

#[derive(Clone, Copy, Debug)]
struct Segment {
    out_lo: u32,
    out_hi: u32,
    origin: Origin,
}

/// Sorted, non-overlapping segments of the output. Bytes between segments
/// (separating spaces and newlines the preprocessor inserted) map to the end
/// of the segment before them.
#[derive(Clone, Debug)]
pub struct SourceMap {
    main: FileId,
    segments: Vec<Segment>,
    /// Each segment's `out_lo`, apart: lookups binary-search this dense array
    /// (a compacted file has a segment per line).
    starts: Vec<u32>,
}

impl SourceMap {
    fn new(main: FileId, segments: Vec<Segment>) -> SourceMap {
        let starts = segments.iter().map(|s| s.out_lo).collect();
        SourceMap { main, segments, starts }
    }

    /// Maps a byte range of `Output.text` to the original source span.
    /// When the ends come from different files, the span of `lo` is returned.
    pub fn span(&self, lo: u32, hi: u32) -> Span {
        self.span_near(lo, hi, &Cell::new(0))
    }

    /// A reader of the map for lookups that mostly move forward a little (a
    /// front end walking its tree): each lookup starts from where the last
    /// one ended.
    pub fn cursor(&self) -> MapCursor<'_> {
        MapCursor { map: self, at: Cell::new(0) }
    }

    fn span_near(&self, lo: u32, hi: u32, at: &Cell<usize>) -> Span {
        let start = self.offset_near(lo, at);
        if hi <= lo {
            return Span { hi: start.lo, ..start };
        }
        let end = match self.segment_before(hi, at) {
            Some(seg) => match seg.origin {
                Origin::Copy { file, lo: src, expansion } => {
                    let at = src + (hi.min(seg.out_hi) - seg.out_lo);
                    Span { file, lo: at, hi: at, expansion }
                }
                Origin::Fixed(span) => span,
            },
            None => start,
        };
        start.to(end)
    }

    /// Maps one output offset: a zero-width span for copied text, the whole
    /// token's origin for macro-generated text.
    pub fn offset(&self, at: u32) -> Span {
        self.offset_near(at, &Cell::new(0))
    }

    fn offset_near(&self, at: u32, near: &Cell<usize>) -> Span {
        let Some(seg) = self.segment_before(at.saturating_add(1), near) else {
            return Span::new(self.main, 0, 0);
        };
        match seg.origin {
            Origin::Copy { file, lo, expansion } => {
                let src = lo + (at.min(seg.out_hi) - seg.out_lo);
                Span { file, lo: src, hi: src, expansion }
            }
            Origin::Fixed(span) => span,
        }
    }

    /// `text` (the output this map belongs to) without the byte ranges in
    /// `cuts`, and the map of what is left: every kept byte maps where it did.
    /// `None` when `cuts` is empty, unsorted, overlapping, or splits a
    /// character.
    pub fn remove(&self, text: &str, cuts: &[Range<usize>]) -> Option<(String, SourceMap)> {
        if cuts.is_empty() {
            return None;
        }
        let mut end = 0;
        for cut in cuts {
            if cut.start < end || cut.end < cut.start || !text.is_char_boundary(cut.start) || !text.is_char_boundary(cut.end) {
                return None;
            }
            end = cut.end;
        }
        let kept = std::iter::once(0).chain(cuts.iter().map(|c| c.end)).zip(cuts.iter().map(|c| c.start).chain(std::iter::once(text.len())));
        let mut out = String::with_capacity(text.len() - cuts.iter().map(|c| c.len()).sum::<usize>());
        let mut segments = Vec::with_capacity(self.segments.len() + cuts.len());
        for (lo, hi) in kept {
            let (lo, hi) = (lo as u32, hi as u32);
            let shift = lo - out.len() as u32;
            // The segment before the piece maps its leading filler bytes: keep
            // what it maps them to as an empty segment.
            let first = self.segments.partition_point(|s| s.out_hi <= lo);
            if let Some(before) = first.checked_sub(1).map(|i| self.segments[i]) {
                if self.segments.get(first).is_none_or(|s| s.out_lo > lo) {
                    let origin = match before.origin {
                        Origin::Copy { file, lo: src, expansion } => Origin::Copy { file, lo: src + (before.out_hi - before.out_lo), expansion },
                        fixed => fixed,
                    };
                    segments.push(Segment { out_lo: lo - shift, out_hi: lo - shift, origin });
                }
            }
            for seg in self.segments[first..].iter().take_while(|s| s.out_lo < hi) {
                let (from, to) = (seg.out_lo.max(lo), seg.out_hi.min(hi));
                let origin = match seg.origin {
                    Origin::Copy { file, lo: src, expansion } => Origin::Copy { file, lo: src + (from - seg.out_lo), expansion },
                    fixed => fixed,
                };
                segments.push(Segment { out_lo: from - shift, out_hi: to - shift, origin });
            }
            out.push_str(&text[lo as usize..hi as usize]);
        }
        Some((out, SourceMap::new(self.main, segments)))
    }

    /// The last segment starting before `end`; `near` is a guess of its
    /// index, tried first with the next one, and then set to the answer.
    fn segment_before(&self, end: u32, near: &Cell<usize>) -> Option<&Segment> {
        let before = |i: usize| self.starts[i] < end && self.starts.get(i + 1).is_none_or(|&next| next >= end);
        let guess = near.get();
        let i = if guess < self.starts.len() && before(guess) {
            guess
        } else if guess + 1 < self.starts.len() && before(guess + 1) {
            guess + 1
        } else {
            self.starts.partition_point(|&s| s < end).checked_sub(1)?
        };
        near.set(i);
        Some(&self.segments[i])
    }
}

/// See [`SourceMap::cursor`].
pub struct MapCursor<'m> {
    map: &'m SourceMap,
    at: Cell<usize>,
}

impl MapCursor<'_> {
    /// [`SourceMap::span`].
    pub fn span(&self, lo: u32, hi: u32) -> Span {
        self.map.span_near(lo, hi, &self.at)
    }
}

/// Builds the output text and its map, merging contiguous copies so that a
/// file without macros becomes a handful of segments.
pub(crate) struct OutBuf {
    pub text: String,
    segments: Vec<Segment>,
}

impl OutBuf {
    pub(crate) fn new() -> OutBuf {
        OutBuf { text: String::new(), segments: Vec::new() }
    }

    fn out_pos(&self) -> u32 {
        u32::try_from(self.text.len()).unwrap_or(u32::MAX)
    }

    pub(crate) fn copy(&mut self, file: FileId, lo: u32, s: &str, expansion: Option<ExpnId>) {
        let out_lo = self.out_pos();
        self.text.push_str(s);
        let out_hi = self.out_pos();
        if let Some(last) = self.segments.last_mut() {
            if let Origin::Copy { file: f, lo: l, expansion: e } = last.origin {
                if f == file && e == expansion && last.out_hi == out_lo && l + (out_lo - last.out_lo) == lo {
                    last.out_hi = out_hi;
                    return;
                }
            }
        }
        self.segments.push(Segment { out_lo, out_hi, origin: Origin::Copy { file, lo, expansion } });
    }

    pub(crate) fn fixed(&mut self, span: Span, s: &str) {
        let out_lo = self.out_pos();
        self.text.push_str(s);
        let out_hi = self.out_pos();
        // Body tokens of one expansion share a span: one segment covers them
        // and the spaces between them.
        if let Some(last) = self.segments.last_mut() {
            if last.origin == Origin::Fixed(span) {
                last.out_hi = out_hi;
                return;
            }
        }
        self.segments.push(Segment { out_lo, out_hi, origin: Origin::Fixed(span) });
    }

    /// Text that maps nowhere of its own (inserted spaces and newlines).
    pub(crate) fn filler(&mut self, s: &str) {
        self.text.push_str(s);
    }

    pub(crate) fn last_byte(&self) -> Option<u8> {
        self.text.as_bytes().last().copied()
    }

    pub(crate) fn finish(self, main: FileId) -> (String, SourceMap) {
        (self.text, SourceMap::new(main, self.segments))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_merge_and_fixed_spans_cover_their_range() {
        let f = FileId(0);
        let mut out = OutBuf::new();
        out.copy(f, 10, "ab", None);
        out.copy(f, 12, "cd", None);
        let call = Span { expansion: Some(ExpnId(3)), ..Span::new(f, 14, 18) };
        out.filler(" ");
        out.fixed(call, "xyz");
        out.filler(" ");
        out.fixed(call, "w");
        let (text, map) = out.finish(f);
        assert_eq!(text, "abcd xyz w");
        assert_eq!(map.segments.len(), 2);
        assert_eq!(map.offset(8), call);
        assert_eq!(map.offset(3), Span::new(f, 13, 13));
        assert_eq!(map.span(1, 3), Span::new(f, 11, 13));
        assert_eq!(map.offset(6), call);
        assert_eq!(map.span(0, 8), Span { expansion: Some(ExpnId(3)), ..Span::new(f, 10, 18) });
        // The inserted space maps to the end of the copy before it.
        assert_eq!(map.offset(4), Span::new(f, 14, 14));
    }

    #[test]
    fn removing_ranges_keeps_every_kept_byte_mapped_where_it_was() {
        let f = FileId(0);
        let call = Span { expansion: Some(ExpnId(1)), ..Span::new(f, 40, 44) };
        let mut out = OutBuf::new();
        out.copy(f, 0, "void h() { a; }", None);
        out.filler("\n");
        out.fixed(call, "x");
        out.filler(" ");
        out.fixed(call, "y");
        out.copy(f, 20, " k() { b; }", None);
        out.filler("  ");
        out.copy(f, 60, "end", None);
        let (text, map) = out.finish(f);
        let cuts = [10..14, 17..19, 31..33];
        let (cut_text, cut_map) = map.remove(&text, &cuts).expect("valid cuts");
        let kept: Vec<usize> = (0..text.len()).filter(|&i| !cuts.iter().any(|c| c.contains(&i))).collect();
        assert_eq!(cut_text, kept.iter().map(|&i| &text[i..i + 1]).collect::<String>());
        for (new, &old) in kept.iter().enumerate() {
            assert_eq!(cut_map.offset(new as u32), map.offset(old as u32), "byte {old} ({:?})", &text[old..old + 1]);
        }
        let (lo, hi) = (text.find("k()").unwrap(), text.find("b;").unwrap());
        let shift = cuts.iter().filter(|c| c.end <= lo).map(|c| c.len()).sum::<usize>();
        assert_eq!(cut_map.span((lo - shift) as u32, (hi - shift) as u32), map.span(lo as u32, hi as u32));
        let bad: [&[Range<usize>]; 4] = [&[], &[4..6, 2..3], &[2..5, 4..6], &[2..3, 5..100]];
        for cuts in bad {
            assert!(map.remove(&text, cuts).is_none(), "{cuts:?}");
        }
    }

    #[test]
    fn a_cursor_agrees_with_the_map_in_any_order() {
        let f = FileId(0);
        let mut out = OutBuf::new();
        out.copy(f, 0, "ab", None);
        out.filler(" ");
        out.copy(f, 10, "cd", None);
        out.fixed(Span { expansion: Some(ExpnId(2)), ..Span::new(f, 20, 24) }, "xy");
        out.copy(f, 30, "ef", None);
        let (text, map) = out.finish(f);
        let n = text.len() as u32;
        let cursor = map.cursor();
        let ranges = (0..=n).flat_map(|lo| (lo..=n).map(move |hi| (lo, hi)));
        // Forward, backward, and jumping about.
        let order: Vec<(u32, u32)> = ranges.clone().chain(ranges.clone().rev()).chain(ranges.step_by(7)).collect();
        for (lo, hi) in order {
            assert_eq!(cursor.span(lo, hi), map.span(lo, hi), "{lo}..{hi}");
        }
    }
}
