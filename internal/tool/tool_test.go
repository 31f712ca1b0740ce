package tool

import (
	"context"
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseArgs(t *testing.T) {
	cases := []struct {
		name, raw, pk string
		want          Args
		err           string
	}{
		{"object", `{"command":"ls"}`, "command", Args{"command": "ls"}, ""},
		{"empty", ``, "command", Args{}, ""},
		{"whitespace", "  \n", "command", Args{}, ""},
		{"json string", `"ls -la"`, "command", Args{"command": "ls -la"}, ""},
		{"bare string", `ls -la`, "command", Args{"command": "ls -la"}, ""},
		{"bare string untrimmed", ` ls `, "command", Args{"command": " ls "}, ""},
		{"array", `[1,2]`, "command", nil, "must be a JSON object, got an array"},
		{"number", `42`, "command", nil, "must be a JSON object, got a number"},
		{"null", `null`, "command", nil, "must be a JSON object, got null"},
		{"rescue command", `{"command": "echo \"hi\"", "x": }`, "command", Args{"command": `echo "hi"`}, ""},
		{"rescue order", `{"query": "q", "code": "c",`, "query", Args{"code": "c"}, ""},
		{"broken object no key", `{"foo": 1,`, "command", nil, "invalid JSON arguments"},
		{"trailing garbage", `{"a":1} x`, "command", nil, "invalid JSON arguments"},
		{"no primary key", `"x"`, "", nil, "no primary key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseArgs(c.raw, c.pk)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %v, %v; want %v", got, err, c.want)
			}
		})
	}
}

func TestArgsInt(t *testing.T) {
	a := Args{"f": 3.9, "s": " 12 ", "sf": "2.5", "bad": "x", "b": true}
	for key, want := range map[string]int{"f": 3, "s": 12, "sf": 2} {
		if n, ok, err := a.Int(key); n != want || !ok || err != nil {
			t.Errorf("%s: %d %v %v", key, n, ok, err)
		}
	}
	if _, ok, err := a.Int("missing"); ok || err != nil {
		t.Error("missing key")
	}
	for _, k := range []string{"bad", "b"} {
		if _, _, err := a.Int(k); err == nil {
			t.Errorf("%s accepted", k)
		}
	}
}

func TestTruncate(t *testing.T) {
	if Truncate("short", 10) != "short" || Truncate("anything", 0) != "anything" {
		t.Fatal("untouched cases changed")
	}
	s := strings.Repeat("é", 30) + strings.Repeat("x", 30)
	got := Truncate(s, 20)
	if !strings.HasPrefix(got, strings.Repeat("é", 10)+"\n\n... [40 chars truncated — output exceeded 20 char limit] ...\n\n") ||
		!strings.HasSuffix(got, strings.Repeat("x", 10)) || !utf8.ValidString(got) {
		t.Fatalf("got %q", got)
	}
}

// The derived sets must be exactly those of behavior.md §0.
func TestSchemasAndDerivedSets(t *testing.T) {
	s := MustLoadSchemas()
	var names []string
	for _, sp := range s.All() {
		names = append(names, sp.Name)
		var params map[string]any
		if err := json.Unmarshal(sp.Parameters, &params); err != nil || params["type"] != "object" {
			t.Errorf("%s: parameters are not an object schema", sp.Name)
		}
		if sp.Description == "" || sp.PrimaryKey == "" {
			t.Errorf("%s: missing description or primary key", sp.Name)
		}
	}
	want := "bash edit_file forget man math notify plan read_file recall remember search task web_fetch web_search write_file"
	if strings.Join(names, " ") != want {
		t.Fatalf("order = %v", names)
	}
	pk := s.PrimaryKeys()
	wantPK := map[string]string{"bash": "command", "read_file": "path", "write_file": "content", "edit_file": "old_string",
		"search": "query", "math": "code", "man": "page", "web_fetch": "url", "web_search": "query", "task": "prompt",
		"plan": "prompt", "remember": "key", "recall": "query", "forget": "key", "notify": "message"}
	if !reflect.DeepEqual(pk, wantPK) {
		t.Fatalf("primary keys = %v", pk)
	}
	if len(s.BuiltinNames()) != 15 {
		t.Fatal("BUILTIN_TOOL_NAMES is not 15 names")
	}
	var all []Tool
	for _, sp := range s.All() {
		all = append(all, specTool{sp})
	}
	reg, err := NewRegistry(all...)
	if err != nil {
		t.Fatal(err)
	}
	names2 := func(ts []Tool) string {
		var n []string
		for _, t := range ts {
			n = append(n, t.Spec().Name)
		}
		return strings.Join(n, " ")
	}
	if got := names2(reg.AgentTools()); got != "man math notify read_file search web_fetch web_search" {
		t.Errorf("AGENT_TOOLS = %s", got)
	}
	if got := names2(reg.TaskAgentTools()); got != "bash edit_file man math notify read_file search web_fetch web_search write_file" {
		t.Errorf("TASK_AGENT_TOOLS = %s", got)
	}
	var auto []string
	for n := range reg.AutoTools() {
		auto = append(auto, n)
	}
	sort.Strings(auto)
	if strings.Join(auto, " ") != "man math notify read_file search web_fetch web_search" {
		t.Errorf("AUTO = %v", auto)
	}
	// What reaches a model is exactly name, description and parameters (the
	// schema's own parameters, untouched); no metadata key.
	for _, d := range reg.Definitions() {
		b, _ := json.Marshal(d)
		var keys map[string]json.RawMessage
		_ = json.Unmarshal(b, &keys)
		if len(keys) != 3 || keys["name"] == nil || keys["description"] == nil || keys["parameters"] == nil {
			t.Errorf("%s definition has keys %v, want name, description, parameters", d.Name, keys)
		}
		if sp := s.MustSpec(d.Name); string(d.Parameters) != string(sp.Parameters) {
			t.Errorf("%s parameters changed on the way to the model", d.Name)
		}
	}
	if _, err := NewRegistry(specTool{s.MustSpec("bash")}, specTool{s.MustSpec("bash")}); err == nil {
		t.Error("duplicate registration accepted")
	}
}

type specTool struct{ spec Spec }

func (s specTool) Spec() Spec                              { return s.spec }
func (s specTool) Prepare(context.Context, Call) *Prepared { return Fail("x", "x") }
