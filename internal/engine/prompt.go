package engine

import (
	"strings"

	"turnstone/internal/tool"
)

// basePrompt is the normal-mode instruction and tool cheat sheet of
// behavior.md §1.2. It deliberately holds no date, cwd or user data so the
// prefix stays cacheable.
const basePrompt = `You are a capable engineering assistant working on the user's machine through tools. When a request needs information or action, answer with tool calls rather than describing what you would do; when you have what you need, answer plainly and concisely.

TOOL PATTERNS:
- Change an existing file: read_file, then edit_file(path, old_string, new_string)
- Create a new file: write_file(path, content)
- Find something across files: search(query, path)
- Complex or multi-step work: plan first
- Commands, git, builds and tests: bash("git log -5"), bash("go test ./...")
- Fetch a URL: web_fetch(url, question)
- Documentation for a command or API: man("tar")`

// systemPrompt assembles the system message; callers hold s.mu.
func (s *Session) systemPrompt() string {
	parts := []string{basePrompt}
	if h, ok := s.opts.Catalog.(tool.Hinter); ok {
		if hint := strings.TrimSpace(h.SystemHint()); hint != "" {
			parts = append(parts, "\n\n"+hint)
		}
	}
	if s.opts.Instructions != "" {
		parts = append(parts, "", s.opts.Instructions)
	}
	return strings.Join(parts, "\n")
}
