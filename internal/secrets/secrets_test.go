package secrets

import (
	"slices"
	"testing"
)

func TestScrubEnv(t *testing.T) {
	in := []string{"PATH=/bin", "OPENAI_API_KEY=sk-1", "ANTHROPIC_API_KEY=a", "HOME=/h", "TAVILY_API_KEY=t", "OPENAI_API_KEY_HINT=x"}
	got := ScrubEnv(in)
	want := []string{"PATH=/bin", "HOME=/h", "OPENAI_API_KEY_HINT=x"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v", got)
	}
}

func TestRedactor(t *testing.T) {
	r := NewRedactor("sk-abcdefgh", "", "short", "sk-abcdefgh-long")
	cases := map[string]string{
		"key sk-abcdefgh here":      "key [redacted] here",
		"sk-abcdefgh-long and more": "[redacted] and more",
		"short words stay":          "short words stay",
	}
	for in, want := range cases {
		if got := r.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
	var nilR *Redactor
	if nilR.Redact("x") != "x" {
		t.Error("nil redactor changed text")
	}
}
