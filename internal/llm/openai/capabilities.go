package openai

import "turnstone/internal/llm"

// applyCapabilities adapts a request body to what the model supports:
//
//   - Native web search (the gpt-5-search-api models): the web_search
//     function tool is removed and "web_search_options": {} is sent; the
//     endpoint searches itself and answers with url_citation annotations,
//     which the stream reader turns into a Sources info line (tools.md
//     web_search, behavior.md §2.10).
//   - No temperature support (gpt-5 and o-series reasoning models reject
//     anything but the default): temperature is left out (behavior.md §7.5).
func (p *Provider) applyCapabilities(b map[string]any, req llm.Request) {
	caps := llm.LookupCapabilities(req.Model, nil)
	if p.opts.Capabilities != nil {
		caps = p.opts.Capabilities(req.Model)
	}
	if !caps.SupportsTemperature {
		delete(b, "temperature")
	}
	if !caps.NativeWebSearch {
		return
	}
	tools, _ := b["tools"].([]wireTool)
	kept := make([]wireTool, 0, len(tools))
	for _, t := range tools {
		if t.Function.Name != "web_search" {
			kept = append(kept, t)
		}
	}
	if len(kept) == len(tools) {
		return // no web_search tool offered: nothing to replace
	}
	if len(kept) == 0 {
		delete(b, "tools")
	} else {
		b["tools"] = kept
	}
	b["web_search_options"] = map[string]any{}
}
