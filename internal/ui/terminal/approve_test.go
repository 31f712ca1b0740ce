package terminal

import (
	"testing"

	"turnstone/internal/engine"
)

func TestParseApproval(t *testing.T) {
	approve := func(fb string) engine.Decision { return engine.Decision{Approved: true, Feedback: fb} }
	always := func(fb string) engine.Decision { return engine.Decision{Approved: true, Always: true, Feedback: fb} }
	deny := func(fb string) engine.Decision { return engine.Decision{Feedback: fb} }
	tests := []struct {
		in   string
		want engine.Decision
	}{
		{"", deny("")},
		{"   ", deny("")},
		{"y", approve("")},
		{"Y", approve("")},
		{"yes", approve("")},
		{" YES ", approve("")},
		{"yes.", approve("")},
		{"y please", approve("please")},
		{"y please, hurry", approve("please, hurry")}, // the original's quirk denied this
		{"y, use full path", approve("use full path")},
		{"y,use full path", approve("use full path")},
		{"yes\tand then run the tests", approve("and then run the tests")},
		{"a", always("")},
		{"always", always("")},
		{"Always, but be careful", always("but be careful")},
		{"n", deny("")},
		{"no", deny("")},
		{"n wrong file", deny("wrong file")},
		{"no, use rg instead", deny("use rg instead")},
		{"use rg instead", deny("use rg instead")},
		{"yep", deny("yep")},
		{"ok do it", deny("ok do it")},
		{"yesterday's file", deny("yesterday's file")},
	}
	for _, tt := range tests {
		if got := ParseApproval(tt.in); got != tt.want {
			t.Errorf("ParseApproval(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestApprovalPrompt(t *testing.T) {
	one := []engine.ApprovalItem{{Name: "write_file", Label: "overwrite_file"}}
	if got, want := approvalPrompt(one), "    Allow overwrite_file? [y/n/a(lways), optional message] "; got != want {
		t.Errorf("one item: %q, want %q", got, want)
	}
	two := []engine.ApprovalItem{{Name: "bash", Label: "bash"}, {Name: "mcp__x__y"}}
	if got, want := approvalPrompt(two), "    Allow 2 tools (bash, mcp__x__y)? [y/n/a(lways), optional message] "; got != want {
		t.Errorf("two items: %q, want %q", got, want)
	}
}
