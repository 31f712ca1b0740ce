package info

import (
	"net/url"
	"strings"
	"testing"
)

func TestHTMLToText(t *testing.T) {
	tests := []struct {
		name, html, want string
	}{
		{"paragraphs and whitespace",
			"<p>Hello \n\t <b>big</b>   world</p><p>Second&nbsp;&nbsp;para</p>",
			"Hello big world\n\nSecond para"},
		{"entities", "<p>a &amp; b &lt;c&gt; &quot;d&quot; &#8212; &eacute;</p>", "a & b <c> \"d\" — é"},
		{"headings", "<h1>Top</h1><p>x</p><h3>Sub <i>part</i></h3>y", "# Top\n\nx\n\n### Sub part\n\ny"},
		{"title line", "<html><head><title> The   Title </title></head><body><p>body</p></body></html>",
			"Title: The Title\n\nbody"},
		{"title repeated by h1 is not duplicated", "<title>Same</title><h1>Same</h1><p>b</p>", "# Same\n\nb"},
		{"scripts and styles dropped",
			`<style>p{color:red}</style><p>a</p><script>document.write("<p>no</p>")</script><noscript>enable JS</noscript><template><p>t</p></template><p>b</p>`,
			"a\n\nb"},
		{"svg and media dropped", `<p>a<svg><text>svg text</text></svg> b</p><video><p>fallback</p></video><iframe src="x">frame</iframe>`, "a b"},
		{"chrome dropped", `<header><a href="/">Logo</a></header><nav><a href="/a">A</a></nav><div><p>content</p></div><aside>ads</aside><footer>(c) 2026</footer>`,
			"content"},
		{"header inside article kept", `<header>site</header><article><header><h1>Post</h1></header><p>text</p><footer>by me</footer></article>`,
			"# Post\n\ntext\n\nby me"},
		{"all chrome falls back", `<nav><a href="https://a.example/">Only link</a></nav>`, "Only link (https://a.example/)"},
		{"nested chrome", `<nav><nav>inner</nav>still nav</nav><p>after</p>`, "after"},
		{"unordered and nested ordered lists",
			"<ul><li>one</li><li>two<ol><li>a</li><li>b</li></ol></li><li>three</li></ul>",
			"- one\n- two\n  1. a\n  2. b\n- three"},
		{"table", "<table><tr><th>K</th><th>V</th></tr><tr><td>a</td><td> 1 </td></tr></table>", "K | V\na | 1"},
		{"pre keeps lines", "<p>x</p><pre>\nline 1\n    indented\n\nlast</pre><p>y</p>", "x\n\nline 1\n    indented\n\nlast\n\ny"},
		{"br", "a<br>b<br/>c", "a\nb\nc"},
		{"unclosed tags", "<div><p>one<p>two<li>three", "one\n\ntwo\n- three"},
		{"comments and doctype", "<!DOCTYPE html><!-- hidden --><p>shown</p>", "shown"},
		{"empty", "<html><body> \n </body></html>", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := HTMLToText([]byte(tt.html), nil); got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestHTMLToTextLinks(t *testing.T) {
	base, _ := url.Parse("https://example.com/docs/guide/page.html?x=1")
	tests := []struct{ html, want string }{
		{`<a href="other.html">Other</a>`, "Other (https://example.com/docs/guide/other.html)"},
		{`<a href="/root">Root</a>`, "Root (https://example.com/root)"},
		{`<a href="../up.html">Up</a>`, "Up (https://example.com/docs/up.html)"},
		{`<a href="./same.html#s">Same</a>`, "Same (https://example.com/docs/guide/same.html#s)"},
		{`<a href="?page=2">Next</a>`, "Next (https://example.com/docs/guide/page.html?page=2)"},
		{`<a href="//cdn.example.net/x">CDN</a>`, "CDN (https://cdn.example.net/x)"},
		{`<a href="https://other.org/a b">Abs</a>`, "Abs (https://other.org/a b)"},
		{`<a href="mailto:me@example.com">Mail</a>`, "Mail (mailto:me@example.com)"},
		{`<a href="#section">In page</a>`, "In page"},
		{`<a href="javascript:void(0)">Click</a>`, "Click"},
		{`<a href="data:text/html,hi">Data</a>`, "Data"},
		{`<a>No href</a>`, "No href"},
		{`<a href="https://example.org/">https://example.org/</a>`, "https://example.org/"},
		{`<a href="/x"></a>after`, "after"},
		{`<a href="/home"><img src="logo.png" alt="Home"></a>`, "Home (https://example.com/home)"},
		{`<p>See <a href="a.html">the <b>docs</b></a>, then stop.</p>`, "See the docs (https://example.com/docs/guide/a.html), then stop."},
		{`<base href="https://mirror.example/base/"><a href="x.html">X</a>`, "X (https://mirror.example/base/x.html)"},
	}
	for _, tt := range tests {
		if got := HTMLToText([]byte(tt.html), base); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.html, got, tt.want)
		}
	}
	// Without a base URL relative links are kept as written.
	if got := HTMLToText([]byte(`<a href="rel.html">R</a>`), nil); got != "R (rel.html)" {
		t.Errorf("no base: %q", got)
	}
}

func TestHTMLToTextMalformedInput(t *testing.T) {
	inputs := []string{
		"<", "<<<>>>", "<a href=", "<p", "</p></div></nav>", "<script>unterminated",
		"<nav>never closed <p>text", "\x00\xff\xfe<p>\x00</p>", strings.Repeat("<div>", 10000),
		"<table><td>cell without row", "<pre>", "<ol><li>x</ol></ol></ul>",
	}
	for _, in := range inputs {
		_ = HTMLToText([]byte(in), nil) // must not panic
	}
	// An unclosed nav swallows the rest; the fallback pass keeps the text.
	if got := HTMLToText([]byte("<nav>menu <p>text"), nil); got != "menu\n\ntext" {
		t.Errorf("unclosed nav: %q", got)
	}
}
