package llm

import "strings"

// thinkTags pairs each opening reasoning tag with its closing tag. Some
// open-weight models (DeepSeek-R1, Qwen3, QwQ behind servers without a
// reasoning parser) write their reasoning inline in the content this way.
var thinkTags = [...]struct{ open, close string }{
	{"<think>", "</think>"},
	{"<reasoning>", "</reasoning>"},
}

// ThinkSplitter separates <think>…</think> and <reasoning>…</reasoning> spans
// from streamed content (behavior.md §1.4). Tags may be split across chunks:
// the splitter holds back a tail that could be the start of a tag (at most
// 11 bytes, one less than the longest tag) until the next chunk decides it.
// The zero value is ready to use; it is not safe for concurrent use.
type ThinkSplitter struct {
	buf   string
	close string // the closing tag while inside a reasoning span, "" outside
}

// Feed takes the next piece of content text and returns what can already be
// shown, in order, as Content or Reasoning deltas (never an empty one).
func (s *ThinkSplitter) Feed(text string) []Delta {
	s.buf += text
	var out []Delta
	for s.buf != "" {
		if s.close == "" {
			i, tag := firstOpenTag(s.buf)
			if i >= 0 {
				out = appendDelta(out, s.buf[:i], false)
				s.buf = s.buf[i+len(tag.open):]
				s.close = tag.close
				continue
			}
			keep := 0
			for _, t := range thinkTags {
				keep = max(keep, partialSuffix(s.buf, t.open))
			}
			out = appendDelta(out, s.buf[:len(s.buf)-keep], false)
			s.buf = s.buf[len(s.buf)-keep:]
			return out
		}
		if i := strings.Index(s.buf, s.close); i >= 0 {
			out = appendDelta(out, s.buf[:i], true)
			s.buf = s.buf[i+len(s.close):]
			s.close = ""
			continue
		}
		keep := partialSuffix(s.buf, s.close)
		out = appendDelta(out, s.buf[:len(s.buf)-keep], true)
		s.buf = s.buf[len(s.buf)-keep:]
		return out
	}
	return out
}

// Flush returns the held-back tail at the end of the stream. Text of an
// unclosed reasoning span counts as reasoning (the model was cut off).
func (s *ThinkSplitter) Flush() []Delta {
	out := appendDelta(nil, s.buf, s.close != "")
	s.buf, s.close = "", ""
	return out
}

// SplitThinkTags splits a complete text into content and reasoning; it is
// the non-streaming form of ThinkSplitter.
func SplitThinkTags(text string) (content, reasoning string) {
	var s ThinkSplitter
	var c, r strings.Builder
	for _, d := range append(s.Feed(text), s.Flush()...) {
		c.WriteString(d.Content)
		r.WriteString(d.Reasoning)
	}
	return c.String(), r.String()
}

func firstOpenTag(s string) (int, struct{ open, close string }) {
	best := -1
	var tag struct{ open, close string }
	for _, t := range thinkTags {
		if i := strings.Index(s, t.open); i >= 0 && (best < 0 || i < best) {
			best, tag = i, t
		}
	}
	return best, tag
}

// partialSuffix returns the length of the longest suffix of s that is a
// proper prefix of tag, i.e. the bytes that may still become the tag.
func partialSuffix(s, tag string) int {
	for n := min(len(tag)-1, len(s)); n > 0; n-- {
		if strings.HasSuffix(s, tag[:n]) {
			return n
		}
	}
	return 0
}

// appendDelta appends text as a delta, merging it into the previous delta
// of the same kind.
func appendDelta(out []Delta, text string, reasoning bool) []Delta {
	if text == "" {
		return out
	}
	if n := len(out); n > 0 {
		last := &out[n-1]
		if reasoning && last.Reasoning != "" {
			last.Reasoning += text
			return out
		}
		if !reasoning && last.Content != "" {
			last.Content += text
			return out
		}
	}
	if reasoning {
		return append(out, Delta{Reasoning: text})
	}
	return append(out, Delta{Content: text})
}
