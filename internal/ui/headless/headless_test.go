package headless

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"turnstone/internal/engine"
	"turnstone/internal/llm"
)

func feed(u *UI) {
	u.Init("ws1", "m", []string{"bash"})
	u.Emit(engine.StateEvent{State: engine.StateThinking})
	u.Emit(engine.ContentEvent{Text: "hi"})
	u.Emit(engine.ToolCallEvent{CallID: "c1", Name: "bash", Arguments: `{"command":"ls"}`, Header: "⚙ bash: ls", NeedsApproval: true})
	u.Emit(engine.ToolOutputChunkEvent{CallID: "c1", Chunk: "a.txt"})
	u.Emit(engine.ToolResultEvent{CallID: "c1", Name: "bash", Output: "a.txt"})
}

func TestStreamJSON(t *testing.T) {
	var b bytes.Buffer
	u := New(FormatStreamJSON, &b)
	feed(u)
	if err := u.Finish("ws1", engine.Turn{Text: "done", Usage: llm.Usage{TotalTokens: 3}}); err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		types = append(types, m["type"].(string))
	}
	want := "init state content tool_call tool_output_chunk tool_result result"
	if strings.Join(types, " ") != want {
		t.Fatalf("types = %v", types)
	}
	if d := u.ApproveTools(context.Background(), nil); !d.Approved {
		t.Fatal("headless must approve")
	}
}

func TestJSONAndText(t *testing.T) {
	var b bytes.Buffer
	u := New(FormatJSON, &b)
	feed(u)
	if err := u.Finish("ws1", engine.Turn{Text: "done"}); err != nil {
		t.Fatal(err)
	}
	var out struct {
		WSID      string     `json:"ws_id"`
		Result    string     `json:"result"`
		ToolCalls []ToolCall `json:"tool_calls"`
	}
	if err := json.Unmarshal(b.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if out.Result != "done" || len(out.ToolCalls) != 1 || out.ToolCalls[0].Output != "a.txt" {
		t.Fatalf("json = %s", b.String())
	}
	b.Reset()
	u = New(FormatText, &b)
	feed(u)
	_ = u.Finish("ws1", engine.Turn{Text: "done"})
	if b.String() != "done\n" {
		t.Fatalf("text = %q", b.String())
	}
}
