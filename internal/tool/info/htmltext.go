package info

import (
	"bytes"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// HTMLToText turns an HTML document into readable plain text for a model:
// headings ("# "), paragraphs, list items ("- ", "1. "), table rows with
// " | " between cells, and links as "text (url)" with relative URLs resolved
// against base (or the page's <base href>). Scripts, styles, embedded
// objects and the navigation chrome (nav, aside, and header/footer outside
// article or main) are dropped. When dropping the chrome leaves nothing, the
// page is converted again with it.
//
// It streams over the x/net/html tokenizer instead of building a tree, which
// keeps a 5 MB page well under 100 ms (see bench/webfetch).
func HTMLToText(doc []byte, base *url.URL) string {
	if s := convertHTML(doc, base, true); s != "" {
		return s
	}
	return convertHTML(doc, base, false)
}

// skipped elements lose their whole content.
var skipped = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true, atom.Svg: true,
	atom.Math: true, atom.Iframe: true, atom.Object: true, atom.Embed: true, atom.Canvas: true,
	atom.Video: true, atom.Audio: true, atom.Map: true, atom.Select: true, atom.Datalist: true,
	atom.Button: true,
}

// blocks start on a new line; the value is the number of newlines (2 = a
// blank line between blocks).
var blocks = map[atom.Atom]int{
	atom.P: 2, atom.Div: 1, atom.Section: 2, atom.Article: 2, atom.Main: 2, atom.Blockquote: 2,
	atom.Pre: 2, atom.Ul: 2, atom.Ol: 2, atom.Dl: 2, atom.Li: 1, atom.Dt: 1, atom.Dd: 1,
	atom.Table: 2, atom.Tr: 1, atom.Caption: 1, atom.Thead: 1, atom.Tbody: 1, atom.Tfoot: 1,
	atom.Figure: 2, atom.Figcaption: 1, atom.Form: 1, atom.Fieldset: 1, atom.Address: 2,
	atom.Details: 2, atom.Summary: 1, atom.Hr: 2, atom.Br: 1, atom.H1: 2, atom.H2: 2, atom.H3: 2,
	atom.H4: 2, atom.H5: 2, atom.H6: 2, atom.Header: 1, atom.Footer: 1, atom.Nav: 1,
	atom.Aside: 1, atom.Body: 1, atom.Option: 1, atom.Legend: 1,
}

type link struct {
	href  string
	start int // len(out) when the anchor opened
}

type list struct {
	ordered bool
	n       int
}

type textWriter struct {
	out       []byte
	base      *url.URL
	newlines  int    // pending line breaks before the next text
	prefix    string // pending block prefix ("- ", "# ")
	sep       string // pending inline separator (" | ")
	space     bool   // pending space
	lineStart bool
	pre       int  // open <pre> elements
	preStart  bool // right after <pre>: a leading newline is dropped
	links     []link
	origin    string // "scheme://host" of base, filled on first use
	dir       string // base URL up to the last '/' of its path
	lists     []list
	cell      int
}

func convertHTML(doc []byte, base *url.URL, dropChrome bool) string {
	z := html.NewTokenizer(bytes.NewReader(doc))
	w := &textWriter{out: make([]byte, 0, len(doc)/2), base: base, lineStart: true}
	var (
		skip      atom.Atom // element whose content is being dropped
		skipDepth int
		article   int // open article/main elements: their header/footer is content
		title     string
		inTitle   bool
	)
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return w.finish(title)
		case html.TextToken:
			if skipDepth > 0 {
				continue
			}
			if inTitle {
				title = strings.Join(strings.Fields(string(z.Text())), " ")
				continue
			}
			w.text(z.Text())
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			a := atom.Lookup(name)
			if skipDepth > 0 {
				if tt == html.StartTagToken && a == skip {
					skipDepth++
				}
				continue
			}
			if tt == html.StartTagToken && a != 0 && (skipped[a] || dropChrome && isChrome(a, article)) {
				skip, skipDepth = a, 1
				continue
			}
			switch a {
			case atom.Title:
				inTitle = tt == html.StartTagToken
				continue
			case atom.Article, atom.Main:
				article++
			case atom.Base:
				if hasAttr && w.base != nil {
					if u, err := w.base.Parse(attr(z, "href")); err == nil {
						w.base = u
					}
				}
				continue
			}
			w.open(z, a, hasAttr, tt == html.SelfClosingTagToken)
		case html.EndTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			if skipDepth > 0 {
				if a == skip {
					skipDepth--
				}
				continue
			}
			switch a {
			case atom.Title:
				inTitle = false
				continue
			case atom.Article, atom.Main:
				if article > 0 {
					article--
				}
			}
			w.close(a)
		}
	}
}

// isChrome: nav and aside are always navigation; header and footer only
// outside article and main, where they are a site's banner and footer.
func isChrome(a atom.Atom, article int) bool {
	switch a {
	case atom.Nav, atom.Aside:
		return true
	case atom.Header, atom.Footer:
		return article == 0
	}
	return false
}

func attr(z *html.Tokenizer, want string) string {
	for {
		k, v, more := z.TagAttr()
		if string(k) == want {
			return string(v)
		}
		if !more {
			return ""
		}
	}
}

func (w *textWriter) block(n int) {
	if n > w.newlines {
		w.newlines = n
	}
	w.sep, w.space = "", false
}

func (w *textWriter) open(z *html.Tokenizer, a atom.Atom, hasAttr, selfClosing bool) {
	switch a {
	case atom.A:
		if selfClosing {
			return
		}
		href := ""
		if hasAttr {
			href = attr(z, "href")
		}
		w.links = append(w.links, link{href: href, start: len(w.out)})
		return
	case atom.Img:
		// An image inside a link stands in for the link text.
		if len(w.links) > 0 && hasAttr {
			if alt := attr(z, "alt"); alt != "" {
				w.text([]byte(alt))
			}
		}
		return
	case atom.Ul, atom.Ol:
		w.lists = append(w.lists, list{ordered: a == atom.Ol})
		if len(w.lists) > 1 { // a nested list continues its item
			w.block(1)
			return
		}
	case atom.Li:
		w.block(1)
		indent := ""
		if len(w.lists) > 1 {
			indent = strings.Repeat("  ", len(w.lists)-1)
		}
		if len(w.lists) > 0 && w.lists[len(w.lists)-1].ordered {
			l := &w.lists[len(w.lists)-1]
			l.n++
			w.prefix = indent + strconv.Itoa(l.n) + ". "
		} else {
			w.prefix = indent + "- "
		}
		return
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		w.block(2)
		w.prefix = strings.Repeat("#", int(a.String()[1]-'0')) + " "
		return
	case atom.Tr:
		w.block(1)
		w.cell = 0
		return
	case atom.Td, atom.Th:
		if w.cell > 0 {
			w.sep = " | "
		}
		w.cell++
		return
	case atom.Pre:
		w.pre++
		w.preStart = true
	}
	if n := blocks[a]; n > 0 {
		w.block(n)
	}
}

func (w *textWriter) close(a atom.Atom) {
	switch a {
	case atom.A:
		if len(w.links) == 0 {
			return
		}
		l := w.links[len(w.links)-1]
		w.links = w.links[:len(w.links)-1]
		w.linkTarget(l)
		return
	case atom.Ul, atom.Ol:
		if len(w.lists) > 0 {
			w.lists = w.lists[:len(w.lists)-1]
		}
		if len(w.lists) > 0 {
			w.block(1)
			return
		}
	case atom.Pre:
		if w.pre > 0 {
			w.pre--
		}
	case atom.Td, atom.Th:
		return
	}
	if n := blocks[a]; n > 0 {
		w.block(n)
	}
}

// linkTarget appends " (url)" after a link's text. In-page anchors,
// javascript: and data: links keep only their text.
func (w *textWriter) linkTarget(l link) {
	href := strings.TrimSpace(l.href)
	if href == "" || href[0] == '#' {
		return
	}
	text := bytes.TrimSpace(w.out[l.start:])
	if len(text) == 0 {
		return
	}
	lower := strings.ToLower(href[:min(len(href), 11)])
	if strings.HasPrefix(lower, "javascript:") || strings.HasPrefix(lower, "data:") {
		return
	}
	var prefix string
	if !strings.HasPrefix(lower, "http://") && !strings.HasPrefix(lower, "https://") && w.base != nil {
		var ok bool
		if prefix, ok = w.fastResolve(href); !ok {
			u, err := w.base.Parse(href)
			if err != nil {
				return
			}
			prefix, href = "", u.String()
		}
	}
	if len(text) == len(prefix)+len(href) && string(text) == prefix+href {
		return
	}
	w.out = append(w.out, " ("...)
	w.out = append(w.out, prefix...)
	w.out = append(w.out, href...)
	w.out = append(w.out, ')')
}

// fastResolve resolves the common relative forms ("/path", "page.html",
// "dir/page?q") without url.Parse, which dominates the cost on link-heavy
// pages: it returns what to put before href. Anything unusual (dot
// segments, schemes, "//host", "?", escapes) is left to url.Parse.
func (w *textWriter) fastResolve(href string) (string, bool) {
	if w.origin == "" {
		if w.base.Scheme == "" || w.base.Host == "" || w.base.Opaque != "" {
			return "", false
		}
		w.origin = w.base.Scheme + "://" + w.base.Host
		p := w.base.EscapedPath()
		w.dir = w.origin + p[:strings.LastIndexByte(p, '/')+1]
		if w.dir == w.origin {
			w.dir += "/"
		}
	}
	if strings.ContainsAny(href, ":\\%\t\n\r ") || strings.Contains(href, "/.") || href[0] == '.' || href[0] == '?' {
		return "", false
	}
	if href[0] == '/' {
		if len(href) > 1 && href[1] == '/' {
			return "", false
		}
		return w.origin, true
	}
	return w.dir, true
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' }

// text writes a text node: whitespace (and no-break spaces) collapsed
// outside <pre>; pending breaks, prefixes and separators are flushed before
// the first visible byte.
func (w *textWriter) text(b []byte) {
	if w.pre > 0 {
		w.preText(b)
		return
	}
	w.preStart = false
	for i := 0; i < len(b); {
		c := b[i]
		if isSpace(c) {
			w.space = true
			i++
			continue
		}
		if c == 0xC2 && i+1 < len(b) && b[i+1] == 0xA0 {
			w.space = true
			i += 2
			continue
		}
		j := i + 1
		for j < len(b) && !isSpace(b[j]) && !(b[j] == 0xC2 && j+1 < len(b) && b[j+1] == 0xA0) {
			j++
		}
		w.flush()
		w.out = append(w.out, b[i:j]...)
		i = j
	}
}

// preText keeps the lines of preformatted text as they are.
func (w *textWriter) preText(b []byte) {
	if w.preStart {
		w.preStart = false
		b = bytes.TrimPrefix(bytes.TrimPrefix(b, []byte("\r")), []byte("\n"))
	}
	for len(b) > 0 {
		nl := bytes.IndexByte(b, '\n')
		line := b
		if nl >= 0 {
			line = b[:nl]
		}
		if len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		if len(line) > 0 {
			w.flush()
			w.out = append(w.out, line...)
		}
		if nl < 0 {
			return
		}
		w.newlines++
		b = b[nl+1:]
	}
}

// flush writes whatever must come before the next visible byte.
func (w *textWriter) flush() {
	switch {
	case w.newlines > 0:
		if len(w.out) > 0 {
			for range w.newlines {
				w.out = append(w.out, '\n')
			}
		}
		w.newlines, w.lineStart = 0, true
	case w.sep != "" && !w.lineStart:
		w.out = append(w.out, w.sep...)
	case w.space && !w.lineStart:
		w.out = append(w.out, ' ')
	}
	if w.lineStart {
		w.out = append(w.out, w.prefix...)
		w.prefix = ""
	}
	w.sep, w.space, w.lineStart = "", false, false
}

func (w *textWriter) finish(title string) string {
	body := bytes.TrimSpace(w.out)
	if len(body) == 0 {
		return ""
	}
	if title != "" && !bytes.HasPrefix(body, []byte(title)) && !bytes.HasPrefix(body, []byte("# "+title)) {
		var sb strings.Builder
		sb.Grow(len(title) + 9 + len(body))
		sb.WriteString("Title: ")
		sb.WriteString(title)
		sb.WriteString("\n\n")
		sb.Write(body)
		return sb.String()
	}
	return string(body)
}
