package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"turnstone/internal/llm"
	"turnstone/internal/tool"
)

// convertResult turns a tools/call result into a tool.Result:
//
//   - text parts are joined with "\n";
//   - images become image parts when the model has vision, otherwise a
//     placeholder naming type and size; audio is always a placeholder;
//   - resource links and embedded resources are named (uri, name, type),
//     with the text of a text resource included;
//   - structuredContent is the output as JSON when there is no text;
//   - isError marks the result as an error, its text prefixed "Error: ".
//
// Output is always the text form (placeholders for images); Parts is set
// only when an image is passed through, and then is what the model sees.
func convertResult(res *sdk.CallToolResult, vision bool) tool.Result {
	var (
		texts   []string // the Output lines
		parts   []llm.Part
		hasText bool
		images  int
	)
	addText := func(s string) {
		texts = append(texts, s)
		if n := len(parts); n > 0 && parts[n-1].Type == llm.PartText {
			parts[n-1].Text += "\n" + s
			return
		}
		parts = append(parts, llm.Part{Type: llm.PartText, Text: s})
	}
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			hasText = true
			addText(c.Text)
		case *sdk.ImageContent:
			placeholder := fmt.Sprintf("[image: %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data))
			if vision && len(c.Data) > 0 {
				images++
				texts = append(texts, placeholder)
				parts = append(parts, llm.Part{Type: llm.PartImage, MediaType: c.MIMEType, Data: c.Data})
			} else {
				addText(placeholder)
			}
		case *sdk.AudioContent:
			addText(fmt.Sprintf("[audio: %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data)))
		case *sdk.ResourceLink:
			hasText = true
			addText(describeLink(c))
		case *sdk.EmbeddedResource:
			hasText = true
			addText(describeEmbedded(c))
		default:
			b, err := json.Marshal(c)
			if err != nil {
				addText(fmt.Sprintf("[unsupported content %T]", c))
			} else {
				addText(string(b))
			}
		}
	}
	if !hasText && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			addText(string(b))
		}
	}
	if len(texts) == 0 {
		addText("(no output)")
	}
	out := tool.Result{Output: strings.Join(texts, "\n"), IsError: res.IsError}
	if images > 0 {
		out.Parts = parts
	}
	if res.IsError {
		out.Output = "Error: " + out.Output
		if len(out.Parts) > 0 {
			if out.Parts[0].Type == llm.PartText {
				out.Parts[0].Text = "Error: " + out.Parts[0].Text
			} else {
				out.Parts = append([]llm.Part{{Type: llm.PartText, Text: "Error:"}}, out.Parts...)
			}
		}
	}
	return out
}

func orUnknown(mime string) string {
	if mime == "" {
		return "unknown type"
	}
	return mime
}

func describeLink(l *sdk.ResourceLink) string {
	var b strings.Builder
	b.WriteString("[resource link: ")
	b.WriteString(l.URI)
	var meta []string
	if l.Name != "" {
		meta = append(meta, "name: "+l.Name)
	}
	if l.MIMEType != "" {
		meta = append(meta, l.MIMEType)
	}
	if l.Size != nil {
		meta = append(meta, fmt.Sprintf("%d bytes", *l.Size))
	}
	if len(meta) > 0 {
		b.WriteString(" (" + strings.Join(meta, ", ") + ")")
	}
	b.WriteString("]")
	if l.Description != "" {
		b.WriteString(" " + l.Description)
	}
	return b.String()
}

func describeEmbedded(e *sdk.EmbeddedResource) string {
	r := e.Resource
	if r == nil {
		return "[resource: (empty)]"
	}
	head := "[resource: " + r.URI
	if r.MIMEType != "" {
		head += " (" + r.MIMEType + ")"
	}
	switch {
	case r.Text != "":
		return head + "]\n" + r.Text
	case len(r.Blob) > 0:
		return fmt.Sprintf("%s, %d bytes of binary data]", head, len(r.Blob))
	}
	return head + "]"
}
