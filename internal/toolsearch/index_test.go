package toolsearch

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

func names(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Name
	}
	return out
}

var plain = IndexOptions{NameBoost: 1}

// TestBM25HandChecked works one query through the formula by hand.
//
// Documents (name + description, plain analysis):
//
//	d0 "alpha apple banana"  (3 terms)
//	d1 "beta apple"          (2 terms)
//	d2 "gamma cherry cherry" (3 terms)
//
// N=3, avgdl=8/3. Query "apple": df=2, idf=ln((3-2+0.5)/(2+0.5)+1)=ln(1.6).
// d0: tf=1, dl=3 → 1·2.5/(1+1.5·(0.25+0.75·3/(8/3))) = 2.5/2.640625
// d1: tf=1, dl=2 → 2.5/(1+1.5·(0.25+0.75·2/(8/3))) = 2.5/2.21875
// so d1 (shorter) ranks first; d2 has no match and is not returned.
func TestBM25HandChecked(t *testing.T) {
	ix := NewIndex([]Doc{
		{"alpha", "apple banana"},
		{"beta", "apple"},
		{"gamma", "cherry cherry"},
	}, plain)
	hits := ix.Search("apple", 10, nil)
	if got := names(hits); !slices.Equal(got, []string{"beta", "alpha"}) {
		t.Fatalf("order = %v, want [beta alpha]", got)
	}
	idf := math.Log(1.6)
	want := []float64{idf * 2.5 / 2.21875, idf * 2.5 / 2.640625}
	for i, h := range hits {
		if math.Abs(h.Score-want[i]) > 1e-6 {
			t.Errorf("score[%d] = %v, want %v", i, h.Score, want[i])
		}
	}
	// A repeated term in a document raises its weight: "cherry" only in d2.
	if got := names(ix.Search("cherry banana", 10, nil)); !slices.Equal(got, []string{"gamma", "alpha"}) {
		t.Errorf("cherry banana → %v", got)
	}
	if hits := ix.Search("durian", 10, nil); len(hits) != 0 {
		t.Errorf("no-match query returned %v", names(hits))
	}
}

// naiveBM25 scores every document by scanning, as the original did; the
// inverted index must agree with it.
func naiveBM25(an analyzer, docs []Doc, query string) []float64 {
	toks := make([][]string, len(docs))
	var total float64
	for i, d := range docs {
		toks[i] = an.terms(d.Name + " " + d.Description)
		total += float64(len(toks[i]))
	}
	avg := total / float64(len(docs))
	var q []string
	for _, t := range an.terms(query) {
		if !slices.Contains(q, t) {
			q = append(q, t)
		}
	}
	scores := make([]float64, len(docs))
	for _, term := range q {
		df := 0
		for _, ts := range toks {
			if slices.Contains(ts, term) {
				df++
			}
		}
		n := float64(len(docs))
		idf := math.Log((n-float64(df)+0.5)/(float64(df)+0.5) + 1)
		for i, ts := range toks {
			tf := 0.0
			for _, x := range ts {
				if x == term {
					tf++
				}
			}
			if tf > 0 {
				dl := float64(len(ts))
				scores[i] += idf * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*dl/avg))
			}
		}
	}
	return scores
}

func TestIndexMatchesNaiveBM25(t *testing.T) {
	docs := []Doc{
		{"mcp__github__create_issue", "Create a new issue in a GitHub repository."},
		{"mcp__github__list_issues", "List issues in a GitHub repository, filtered by state and labels."},
		{"mcp__gitlab__create_issue", "Create a new issue in a GitLab project."},
		{"mcp__slack__slack_post_message", "Post a new message to a Slack channel."},
		{"mcp__postgres__query", "Run a read-only SQL query against the database."},
		{"mcp__fs__search_files", "Recursively search for files matching a pattern, in all subdirectories."},
	}
	for _, q := range []string{"create issue", "new message slack", "issues issues repository", "sql database query", "files", "zzz"} {
		for _, opts := range []IndexOptions{plain, {NameBoost: 1, Stem: true, StopWords: true}} {
			ix := NewIndex(docs, opts)
			want := naiveBM25(ix.an, docs, q)
			got := make([]float64, len(docs))
			for _, h := range ix.Search(q, len(docs), nil) {
				got[slices.IndexFunc(docs, func(d Doc) bool { return d.Name == h.Name })] = h.Score
			}
			for i := range docs {
				if math.Abs(got[i]-want[i]) > 1e-5 {
					t.Errorf("%+v query %q doc %s: score %v, naive %v", opts, q, docs[i].Name, got[i], want[i])
				}
			}
		}
	}
}

func TestSearchTiesLimitAndSkip(t *testing.T) {
	docs := []Doc{{"t0", "same words"}, {"t1", "same words"}, {"t2", "same words"}, {"t3", "other"}}
	ix := NewIndex(docs, plain)
	if got := names(ix.Search("same", 2, nil)); !slices.Equal(got, []string{"t0", "t1"}) {
		t.Errorf("ties = %v, want index order [t0 t1]", got)
	}
	skip := func(n string) bool { return n == "t0" }
	if got := names(ix.Search("same", 2, skip)); !slices.Equal(got, []string{"t1", "t2"}) {
		t.Errorf("skip = %v, want [t1 t2]", got)
	}
	if got := ix.Search("same", 0, nil); got != nil {
		t.Errorf("k=0 returned %v", got)
	}
	if got := NewIndex(nil, plain).Search("x", 5, nil); got != nil {
		t.Errorf("empty index returned %v", got)
	}
}

func TestNameMatchRanksFirst(t *testing.T) {
	docs := []Doc{
		// Descriptions that repeat the query words beat the named tool on
		// BM25 alone.
		{"mcp__a__pull_request_helper", "pull request pull request create pull request create"},
		{"mcp__github__create_pull_request", "Open a PR."},
		{"mcp__github__create_issue", "Open an issue."},
		{"mcp__gitlab__create_issue", "Open an issue in GitLab."},
		{"mcp__jira__jira_create_issue", "create issue create issue create issue"},
	}
	ix := NewIndex(docs, DefaultIndexOptions())
	cases := []struct {
		q     string
		first []string
	}{
		{"mcp__github__create_pull_request", []string{"mcp__github__create_pull_request"}},
		{"create_pull_request", []string{"mcp__github__create_pull_request"}},
		{"  `CREATE_PULL_REQUEST`  ", []string{"mcp__github__create_pull_request"}},
		{"mcp__github__create_p", []string{"mcp__github__create_pull_request"}},
		{"create_pull", []string{"mcp__github__create_pull_request"}},
		{"create_issue", []string{"mcp__github__create_issue", "mcp__gitlab__create_issue"}},
		{"please call create_issue, thanks", []string{"mcp__github__create_issue", "mcp__gitlab__create_issue"}},
		{"mcp__gitlab", []string{"mcp__gitlab__create_issue"}},
	}
	for _, c := range cases {
		hits := ix.Search(c.q, 5, nil)
		got := names(hits)
		if len(got) < len(c.first) || !sameSet(got[:len(c.first)], c.first) {
			t.Errorf("%q → %v, want first %v", c.q, got, c.first)
			continue
		}
		for _, h := range hits[:len(c.first)] {
			if !h.NameMatch {
				t.Errorf("%q: %s not marked as a name match", c.q, h.Name)
			}
		}
	}
	// Exact beats prefix: "create_issue" is exact for two tools and a
	// prefix of none; "jira_create" is a prefix of jira_create_issue.
	if got := names(ix.Search("jira_create", 1, nil)); !slices.Equal(got, []string{"mcp__jira__jira_create_issue"}) {
		t.Errorf("prefix → %v", got)
	}
	// Two-letter prefixes do not count; plain BM25 applies.
	if got := ix.Search("cr", 5, nil); len(got) != 0 {
		t.Errorf("short prefix matched %v", names(got))
	}
	// Without NameMatch, the BM25 winner stays first.
	opts := DefaultIndexOptions()
	opts.NameMatch = false
	if got := names(NewIndex(docs, opts).Search("create_pull_request", 1, nil)); got[0] != "mcp__a__pull_request_helper" {
		t.Errorf("BM25-only → %v", got)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func TestSearchConcurrent(t *testing.T) {
	var docs []Doc
	for i := range 200 {
		docs = append(docs, Doc{fmt.Sprintf("mcp__s%d__tool_%d", i%7, i), fmt.Sprintf("word%d shared text %d", i%13, i)})
	}
	ix := NewIndex(docs, DefaultIndexOptions())
	want := names(ix.Search("word3 shared", 5, nil))
	done := make(chan []string)
	for range 8 {
		go func() {
			var last []string
			for range 50 {
				last = names(ix.Search("word3 shared", 5, nil))
			}
			done <- last
		}()
	}
	for range 8 {
		if got := <-done; !slices.Equal(got, want) {
			t.Errorf("concurrent search = %v, want %v", got, want)
		}
	}
}
