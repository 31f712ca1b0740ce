package toolsearch

import (
	"slices"
	"testing"
)

func TestTokenize(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"mcp__github__create-issue", []string{"mcp", "github", "create", "issue"}},
		{"[MCP: github] Create an issue.", []string{"mcp", "github", "create", "an", "issue"}},
		{"getS3Object", []string{"get", "s3", "object"}},
		{"HTTPServer", []string{"http", "server"}},
		{"XMLHttpRequest", []string{"xml", "http", "request"}},
		{"listIDs of URLs", []string{"list", "ids", "of", "urls"}},
		{"don't stop", []string{"dont", "stop"}},
		{"a/b.c d\te\nf", []string{"a", "b", "c", "d", "e", "f"}},
		{"API-post-search", []string{"api", "post", "search"}},
		{"(owner, repo): \"quoted\"!", []string{"owner", "repo", "quoted"}},
		{"Größe_prüfen", []string{"größe", "prüfen"}},
		{"version2Beta", []string{"version2", "beta"}},
		{"", nil},
		{"  ---  ", nil},
	}
	for _, c := range cases {
		if got := Tokenize(c.in); !slices.Equal(got, c.want) {
			t.Errorf("Tokenize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestStem(t *testing.T) {
	cases := map[string]string{
		"issues": "issu", "issue": "issu",
		"create": "creat", "creates": "creat", "created": "creat", "creating": "creat",
		"repositories": "repository", "repository": "repository",
		"branches": "branch", "branch": "branch",
		"getting": "get", "running": "run", "listing": "list", "pulls": "pull", "pulled": "pull",
		"status": "status", "access": "access", "analysis": "analysis", "news": "news",
		"string": "string", "need": "need", "tree": "tree", "files": "fil", "file": "fil",
		"s3": "s3", "ids": "ids", "größe": "größe",
	}
	for in, want := range cases {
		if got := string(stem([]byte(in))); got != want {
			t.Errorf("stem(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAnalyzerModes(t *testing.T) {
	legacy := analyzer{legacy: true}.terms("[MCP: github] Create_an-issue.")
	if want := []string{"[mcp:", "github]", "create", "an", "issue"}; !slices.Equal(legacy, want) {
		t.Errorf("legacy terms = %q, want %q", legacy, want)
	}
	got := analyzer{stem: true, stopWords: true}.terms("List the open issues assigned to me")
	if want := []string{"list", "open", "issu", "assign"}; !slices.Equal(got, want) {
		t.Errorf("terms = %q, want %q", got, want)
	}
}
