package llm

import (
	"strings"
	"testing"
)

// feedAll runs chunks through a splitter and returns the concatenated
// content and reasoning plus the deltas in order.
func feedAll(chunks []string) (content, reasoning string, deltas []Delta) {
	var s ThinkSplitter
	for _, c := range chunks {
		deltas = append(deltas, s.Feed(c)...)
	}
	deltas = append(deltas, s.Flush()...)
	var cb, rb strings.Builder
	for _, d := range deltas {
		cb.WriteString(d.Content)
		rb.WriteString(d.Reasoning)
	}
	return cb.String(), rb.String(), deltas
}

func TestThinkSplitterWholeTexts(t *testing.T) {
	tests := []struct {
		name, in, content, reasoning string
	}{
		{"plain", "hello world", "hello world", ""},
		{"think", "<think>hmm</think>answer", "answer", "hmm"},
		{"reasoning tag", "<reasoning>r</reasoning>a", "a", "r"},
		{"content around", "a<think>b</think>c", "ac", "b"},
		{"two spans", "<think>x</think>1<reasoning>y</reasoning>2", "12", "xy"},
		{"unclosed is reasoning", "<think>cut off", "", "cut off"},
		{"mismatched close stays reasoning", "<think>a</reasoning>b", "", "a</reasoning>b"},
		{"lone less-than", "a < b and c<d", "a < b and c<d", ""},
		{"trailing partial tag flushed as content", "text <thi", "text <thi", ""},
		{"close tag without open is content", "a</think>b", "a</think>b", ""},
		{"unicode", "<think>größe</think>日本", "日本", "größe"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, r, _ := feedAll([]string{tt.in})
			if c != tt.content || r != tt.reasoning {
				t.Errorf("got content %q reasoning %q, want %q / %q", c, r, tt.content, tt.reasoning)
			}
			c2, r2 := SplitThinkTags(tt.in)
			if c2 != c || r2 != r {
				t.Errorf("SplitThinkTags = %q / %q, streaming gave %q / %q", c2, r2, c, r)
			}
		})
	}
}

// TestThinkSplitterEverySplit cuts the input at every pair of positions, so
// each tag is split across chunks in every possible way.
func TestThinkSplitterEverySplit(t *testing.T) {
	inputs := []struct{ in, content, reasoning string }{
		{"pre<think>deep thought</think>post", "prepost", "deep thought"},
		{"<reasoning>why</reasoning>\n\nanswer <b>", "\n\nanswer <b>", "why"},
	}
	for _, tt := range inputs {
		for i := 0; i <= len(tt.in); i++ {
			for j := i; j <= len(tt.in); j++ {
				chunks := []string{tt.in[:i], tt.in[i:j], tt.in[j:]}
				c, r, _ := feedAll(chunks)
				if c != tt.content || r != tt.reasoning {
					t.Fatalf("split %q: got %q / %q, want %q / %q", chunks, c, r, tt.content, tt.reasoning)
				}
			}
		}
	}
}

func TestThinkSplitterByteChunksAndOrder(t *testing.T) {
	in := "A<think>B</think>C"
	var chunks []string
	for i := range len(in) {
		chunks = append(chunks, in[i:i+1])
	}
	_, _, deltas := feedAll(chunks)
	var kinds []string
	for _, d := range deltas {
		switch {
		case d.Content != "" && d.Reasoning == "":
			kinds = append(kinds, "c:"+d.Content)
		case d.Reasoning != "" && d.Content == "":
			kinds = append(kinds, "r:"+d.Reasoning)
		default:
			t.Fatalf("delta with not exactly one field: %+v", d)
		}
	}
	if got := strings.Join(kinds, ","); got != "c:A,r:B,c:C" {
		t.Errorf("delta order = %s", got)
	}
}

func TestThinkSplitterHoldsBackOnlyPossibleTags(t *testing.T) {
	var s ThinkSplitter
	out := s.Feed("hello <th")
	if len(out) != 1 || out[0].Content != "hello " {
		t.Fatalf("Feed = %+v, want only %q released", out, "hello ")
	}
	out = s.Feed("ings")
	if len(out) != 1 || out[0].Content != "<things" {
		t.Fatalf("Feed = %+v, want %q once the tag is ruled out", out, "<things")
	}
	out = s.Feed("plain text")
	if len(out) != 1 || out[0].Content != "plain text" {
		t.Fatalf("Feed = %+v, want text without a tag start released at once", out)
	}
}
