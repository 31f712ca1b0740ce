package fileops

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"turnstone/internal/tool"
)

var schemas = tool.MustLoadSchemas()

func prepare(t *testing.T, tl tool.Tool, args tool.Args) *tool.Prepared {
	t.Helper()
	p := tl.Prepare(context.Background(), tool.Call{ID: "c1", Name: tl.Spec().Name, Args: args})
	if p == nil {
		t.Fatal("Prepare returned nil")
	}
	return p
}

// call prepares and runs; a validation failure comes back as an error result.
func call(t *testing.T, tl tool.Tool, args tool.Args) tool.Result {
	t.Helper()
	p := prepare(t, tl, args)
	if p.Err != "" {
		return tool.ErrorResult(p.Err)
	}
	return p.Run(context.Background(), nil)
}

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
