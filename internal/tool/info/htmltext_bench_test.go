package info

import (
	"fmt"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"
)

// benchPage builds a deterministic HTML page of about size bytes shaped like
// a large documentation or news page: a head with styles and scripts, a
// navigation bar, then article sections with headings, paragraphs full of
// inline markup, entities and links, lists, tables and code, plus sidebars.
func benchPage(size int) []byte {
	var b strings.Builder
	b.Grow(size + 64<<10)
	b.WriteString(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Benchmark &amp; page</title>`)
	b.WriteString(`<link rel="stylesheet" href="/static/site.css"><style>body{font-family:sans-serif}.nav a{color:#333}</style>`)
	b.WriteString(`<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments)}</script></head><body>`)
	b.WriteString(`<header class="site"><nav class="nav"><ul>`)
	for i := range 40 {
		fmt.Fprintf(&b, `<li><a href="/section/%d">Section %d</a></li>`, i, i)
	}
	b.WriteString(`</ul></nav></header><main><article>`)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, `<section id="s%d"><h2>Part %d: the &quot;quick&quot; brown fox</h2>`, i, i)
		for p := range 6 {
			fmt.Fprintf(&b, `<p class="lead">Paragraph %d.%d has <b>bold</b>, <em>emphasis</em>, <code>code()</code>&nbsp;and a `+
				`<a href="/docs/topic-%d-%d.html" title="topic">relative link</a> plus an <a href="https://example.org/ref/%d">absolute one</a>. `+
				`Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua &mdash; `+
				`ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat.</p>`+"\n", i, p, i, p, i)
		}
		b.WriteString(`<ul>`)
		for l := range 5 {
			fmt.Fprintf(&b, `<li><span class="item">Item %d</span> with <a href="#note-%d">note</a></li>`, l, l)
		}
		b.WriteString(`</ul><table class="data"><thead><tr><th>Key</th><th>Value</th><th>Notes</th></tr></thead><tbody>`)
		for r := range 4 {
			fmt.Fprintf(&b, `<tr><td>key-%d</td><td>%d</td><td>some &lt;escaped&gt; text</td></tr>`, r, r*i)
		}
		b.WriteString("</tbody></table><pre><code>func main() {\n\tfmt.Println(\"hello\")\n}\n</code></pre>")
		b.WriteString(`<script type="application/ld+json">{"@context":"https://schema.org","@type":"Article"}</script>`)
		b.WriteString(`<aside class="related"><a href="/related/1">Related one</a> <a href="/related/2">Related two</a></aside>`)
		b.WriteString(`<div class="share"><svg viewBox="0 0 24 24"><path d="M12 2L2 7l10 5 10-5-10-5z"/></svg><button>Share</button></div></section>` + "\n")
	}
	b.WriteString(`</article></main><footer><p>Copyright</p><a href="/privacy">Privacy</a></footer></body></html>`)
	return []byte(b.String())
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkHTMLToText5MB is the web_fetch performance goal: a 5 MB page
// converts in under 100 ms (bench/webfetch/README.md has the numbers).
func BenchmarkHTMLToText5MB(b *testing.B) {
	doc := benchPage(5 << 20)
	base, _ := url.Parse("https://example.com/docs/index.html")
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	var out string
	cpu0 := cpuTime()
	for b.Loop() {
		out = HTMLToText(doc, base)
	}
	// CPU time (user+system, GC included) is reported beside wall time
	// because wall time on a shared 2-core machine swings with the load.
	b.ReportMetric(float64(cpuTime()-cpu0)/1e6/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(len(out)), "out-bytes")
}

func TestBenchPageConverts(t *testing.T) {
	doc := benchPage(200 << 10)
	base, _ := url.Parse("https://example.com/docs/index.html")
	out := HTMLToText(doc, base)
	for _, want := range []string{"# Part 0: the \"quick\" brown fox", "relative link (https://example.com/docs/topic-0-0.html)",
		"absolute one (https://example.org/ref/0)", "key-1 | 1 | some <escaped> text", "\tfmt.Println(\"hello\")", "- Item 0 with note"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	for _, bad := range []string{"Section 3", "dataLayer", "Related one", "Share", "schema.org", "Copyright", "Privacy"} {
		if strings.Contains(out, bad) {
			t.Errorf("output keeps chrome or script text %q", bad)
		}
	}
}
