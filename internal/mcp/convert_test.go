package mcp

import (
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"turnstone/internal/llm"
)

func TestConvertResult(t *testing.T) {
	png := []byte("\x89PNG0123456789")
	size := int64(7)
	cases := []struct {
		name      string
		res       *sdk.CallToolResult
		vision    bool
		want      string
		isErr     bool
		wantParts []llm.PartType
	}{
		{"text joined", &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "a"}, &sdk.TextContent{Text: "b"}}}, false, "a\nb", false, nil},
		{"empty", &sdk.CallToolResult{}, false, "(no output)", false, nil},
		{"image without vision", &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "see"}, &sdk.ImageContent{MIMEType: "image/png", Data: png}}}, false,
			"see\n[image: image/png, 14 bytes]", false, nil},
		{"image with vision", &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "see"}, &sdk.ImageContent{MIMEType: "image/png", Data: png}, &sdk.TextContent{Text: "done"}}}, true,
			"see\n[image: image/png, 14 bytes]\ndone", false, []llm.PartType{llm.PartText, llm.PartImage, llm.PartText}},
		{"audio", &sdk.CallToolResult{Content: []sdk.Content{&sdk.AudioContent{MIMEType: "audio/wav", Data: []byte("1234")}}}, true, "[audio: audio/wav, 4 bytes]", false, nil},
		{"structured only", &sdk.CallToolResult{StructuredContent: map[string]any{"a": 1}}, false, `{"a":1}`, false, nil},
		{"structured ignored with text", &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "t"}}, StructuredContent: map[string]any{"a": 1}}, false, "t", false, nil},
		{"resource link", &sdk.CallToolResult{Content: []sdk.Content{&sdk.ResourceLink{URI: "file:///x", Name: "x", MIMEType: "text/plain", Size: &size}}}, false,
			"[resource link: file:///x (name: x, text/plain, 7 bytes)]", false, nil},
		{"embedded text", &sdk.CallToolResult{Content: []sdk.Content{&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://a", MIMEType: "text/plain", Text: "hello"}}}}, false,
			"[resource: mem://a (text/plain)]\nhello", false, nil},
		{"embedded blob", &sdk.CallToolResult{Content: []sdk.Content{&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://b", Blob: []byte{1, 2}}}}}, false,
			"[resource: mem://b, 2 bytes of binary data]", false, nil},
		{"is error", &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "boom"}}}, false, "Error: boom", true, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := convertResult(c.res, c.vision)
			if got.Output != c.want || got.IsError != c.isErr {
				t.Errorf("got %q (err %v), want %q (err %v)", got.Output, got.IsError, c.want, c.isErr)
			}
			if len(got.Parts) != len(c.wantParts) {
				t.Fatalf("parts = %+v, want types %v", got.Parts, c.wantParts)
			}
			for i, p := range got.Parts {
				if p.Type != c.wantParts[i] {
					t.Errorf("part %d type %s, want %s", i, p.Type, c.wantParts[i])
				}
				if p.Type == llm.PartImage && (p.MediaType != "image/png" || string(p.Data) != string(png)) {
					t.Errorf("image part lost data: %+v", p)
				}
			}
		})
	}
}

func TestConvertSchema(t *testing.T) {
	cases := []struct {
		in   any
		want string
	}{
		{nil, `{"type":"object","properties":{}}`},
		{map[string]any{}, `{"type":"object","properties":{}}`},
		{map[string]any{"type": "object"}, `{"properties":{},"type":"object"}`},
		{map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}, "required": []any{"q"}},
			`{"properties":{"q":{"type":"string"}},"required":["q"],"type":"object"}`},
		{"not a schema", `{"type":"object","properties":{}}`},
	}
	for _, c := range cases {
		if got := string(convertSchema(c.in)); got != c.want {
			t.Errorf("convertSchema(%v) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestPreviewArgs(t *testing.T) {
	if p := previewArgs(nil); len(p) != 1 || p[0].Text != "    (no arguments)" || p[0].Style != "dim" {
		t.Errorf("empty preview = %+v", p)
	}
	p := previewArgs(map[string]any{"b": strings.Repeat("z", 300), "a": map[string]any{"k": 1}, "c": "two\nlines"})
	if len(p) != 3 {
		t.Fatalf("preview = %+v", p)
	}
	if p[0].Text != `    a: {"k":1}` {
		t.Errorf("line 0 = %q", p[0].Text)
	}
	if p[1].Text != "    b: "+strings.Repeat("z", 200)+"..." {
		t.Errorf("line 1 = %q", p[1].Text)
	}
	if p[2].Text != `    c: two\nlines` {
		t.Errorf("line 2 = %q", p[2].Text)
	}
}

func TestRefreshReportFormat(t *testing.T) {
	r := RefreshReport{Servers: []ServerRefresh{
		{Server: "github", Added: []string{"mcp__github__create_pr"}},
		{Server: "postgres"},
		{Server: "remote", Reconnected: true, Removed: []string{"mcp__remote__a"}},
	}}
	want := "MCP refresh complete:\n  github: +1 added\n    + mcp__github__create_pr\n  postgres: no changes\n  remote: reconnected, -1 removed\n    - mcp__remote__a"
	if got := r.Format(); got != want {
		t.Errorf("Format =\n%s\nwant\n%s", got, want)
	}
	if got := (RefreshReport{}).Format(); got != "MCP refresh complete: no servers to refresh." {
		t.Errorf("empty = %q", got)
	}
}

func TestFirstDelay(t *testing.T) {
	interval := 4 * 3600e9
	seen := map[int64]bool{}
	for seed := uint64(0); seed < 50; seed++ {
		d := firstDelay(seed*0x9e3779b97f4a7c15, 14400e9)
		if d < 0 || float64(d) >= interval {
			t.Fatalf("delay %v out of range", d)
		}
		seen[int64(d)] = true
		if firstDelay(seed*0x9e3779b97f4a7c15, 14400e9) != d {
			t.Fatal("not deterministic for a seed")
		}
	}
	if len(seen) < 45 {
		t.Errorf("delays not spread: %d distinct of 50", len(seen))
	}
}
