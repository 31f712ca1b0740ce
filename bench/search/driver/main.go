// Command driver runs turnstone's search tool once and prints its model text
// to stdout, so bench/search/run.sh can time it against rg and grep.
//
//	go run ./bench/search/driver PATTERN PATH
package main

import (
	"context"
	"fmt"
	"os"

	"turnstone/internal/tool"
	"turnstone/internal/tool/fileops"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: driver PATTERN PATH")
		os.Exit(2)
	}
	s := fileops.NewSearch(tool.MustLoadSchemas().MustSpec("search"), fileops.SearchOptions{})
	p := s.Prepare(context.Background(), tool.Call{Name: "search", Args: tool.Args{"query": os.Args[1], "path": os.Args[2]}})
	if p.Err != "" {
		fmt.Fprintln(os.Stderr, p.Err)
		os.Exit(2)
	}
	res := p.Run(context.Background(), nil)
	// Two writes, not one concatenation: copying a 10 MB result into fresh
	// memory costs more than the search's own output assembly.
	os.Stdout.WriteString(res.Output)
	os.Stdout.WriteString("\n")
	if res.IsError {
		os.Exit(1)
	}
}
