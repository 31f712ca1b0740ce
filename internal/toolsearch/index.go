package toolsearch

import (
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Okapi BM25 parameters (behavior.md §3).
const (
	bm25K1 = 1.5
	bm25B  = 0.75
)

// maxPrefixMatches bounds the tools a prefix query lifts to the top, so a
// query like "mcp__" that prefixes every name stays cheap.
const maxPrefixMatches = 256

// Doc is one searchable tool: its full (prefixed) name and description.
type Doc struct {
	Name        string
	Description string
}

// IndexOptions selects how documents and queries are analysed. The
// benchmark compares them; sessions use DefaultIndexOptions.
type IndexOptions struct {
	// Legacy reproduces the original index exactly: the document is
	// "{name} {description}" split on [_\-./\s]+ with punctuation kept, and
	// every other option is ignored.
	Legacy bool
	// NameBoost counts the name's terms this many times (values below 1
	// count as 1, which is plain BM25 over name and description).
	NameBoost int
	// Stem conflates plurals and -ed/-ing forms.
	Stem bool
	// StopWords drops English function words from documents and queries.
	StopWords bool
	// NameMatch ranks an exact, then a prefix, match of the query on a tool
	// name (full or after mcp__server__) above every BM25 match.
	NameMatch bool
}

// DefaultIndexOptions is the configuration sessions use. The benchmark in
// bench/toolsearch shows what each part adds: stemming raised hit@5, while
// stop words and name boosting did not, so they stay off.
func DefaultIndexOptions() IndexOptions {
	return IndexOptions{NameBoost: 1, Stem: true, NameMatch: true}
}

// Hit is one search result.
type Hit struct {
	Name        string
	Description string
	Score       float64
	// NameMatch: ranked first because the query named the tool (exactly or
	// by prefix).
	NameMatch bool
}

type posting struct {
	doc int32
	// w is the BM25 term-frequency factor tf·(k1+1)/(tf+k1·(1−b+b·dl/avgdl)),
	// precomputed so a query only multiplies by idf and adds.
	w float32
}

type nameKey struct {
	key string
	doc int32
}

// Index is an inverted BM25 index over tool names and descriptions. It is
// immutable after NewIndex and safe for concurrent searches.
type Index struct {
	opts     IndexOptions
	an       analyzer
	docs     []Doc
	terms    map[string]int32
	postings [][]posting
	idf      []float64
	exact    map[string][]int32 // lower-cased full and short names
	prefix   []nameKey          // the same keys, sorted, for prefix ranges
	// scratch recycles per-query score arrays: allocating and zeroing one
	// per query costs more than the scoring itself at 10,000 tools.
	scratch sync.Pool
}

// scratch is one query's accumulator; scores is zero outside touched.
type scratch struct {
	scores  []float64
	touched []int32
	terms   []int32
}

// NewIndex builds the index over docs, in order (ties rank by this order).
func NewIndex(docs []Doc, opts IndexOptions) *Index {
	if opts.Legacy {
		opts = IndexOptions{Legacy: true}
	}
	ix := &Index{
		opts:  opts,
		an:    analyzer{legacy: opts.Legacy, stem: opts.Stem, stopWords: opts.StopWords},
		docs:  slices.Clone(docs),
		terms: make(map[string]int32, len(docs)),
		exact: make(map[string][]int32, len(docs)*2),
	}
	if opts.NameMatch {
		ix.prefix = make([]nameKey, 0, len(docs)*2)
	}
	boost := max(opts.NameBoost, 1)
	// Pass 1: every document's (term, tf) pairs, flat, and each term's df.
	type pair struct{ term, tf int32 }
	pairs := make([]pair, 0, len(docs)*16) // ~16 distinct terms per tool
	start := make([]int32, len(docs)+1)
	docLen := make([]int32, len(docs))
	var df []int32
	var ids []int32
	var buf []byte
	termID := func(w []byte) {
		id, ok := ix.terms[string(w)]
		if !ok {
			id = int32(len(df))
			ix.terms[string(w)] = id
			df = append(df, 0)
		}
		ids = append(ids, id)
	}
	for d, doc := range docs {
		ids = ids[:0]
		if opts.Legacy {
			buf = ix.an.each(doc.Name+" "+doc.Description, buf, termID)
		} else {
			buf = ix.an.each(doc.Name, buf, termID)
			n := len(ids)
			for range boost - 1 {
				ids = append(ids, ids[:n]...)
			}
			buf = ix.an.each(doc.Description, buf, termID)
		}
		docLen[d] = int32(len(ids))
		slices.Sort(ids)
		for i := 0; i < len(ids); {
			j := i + 1
			for j < len(ids) && ids[j] == ids[i] {
				j++
			}
			pairs = append(pairs, pair{term: ids[i], tf: int32(j - i)})
			df[ids[i]]++
			i = j
		}
		start[d+1] = int32(len(pairs))
		if opts.NameMatch {
			ix.addNameKeys(doc.Name, int32(d))
		}
	}
	// Pass 2: postings in one backing array, each list in document order.
	backing := make([]posting, len(pairs))
	ix.postings = make([][]posting, len(df))
	off := 0
	for t, n := range df {
		ix.postings[t] = backing[off : off : off+int(n)]
		off += int(n)
	}
	for d := range docs {
		for _, p := range pairs[start[d]:start[d+1]] {
			ix.postings[p.term] = append(ix.postings[p.term], posting{doc: int32(d), w: float32(p.tf)})
		}
	}
	ix.finish(docLen)
	return ix
}

// finish turns raw term frequencies into BM25 weights and computes idf.
func (ix *Index) finish(docLen []int32) {
	n := float64(len(ix.docs))
	var total float64
	for _, l := range docLen {
		total += float64(l)
	}
	avg := 1.0
	if n > 0 && total > 0 {
		avg = total / n
	}
	norm := make([]float64, len(docLen))
	for d, l := range docLen {
		norm[d] = bm25K1 * (1 - bm25B + bm25B*float64(l)/avg)
	}
	ix.idf = make([]float64, len(ix.postings))
	for t, ps := range ix.postings {
		df := float64(len(ps))
		ix.idf[t] = math.Log((n-df+0.5)/(df+0.5) + 1)
		for i := range ps {
			tf := float64(ps[i].w)
			ps[i].w = float32(tf * (bm25K1 + 1) / (tf + norm[ps[i].doc]))
		}
	}
	slices.SortFunc(ix.prefix, func(a, b nameKey) int {
		if c := strings.Compare(a.key, b.key); c != 0 {
			return c
		}
		return int(a.doc - b.doc)
	})
}

func (ix *Index) addNameKeys(name string, d int32) {
	full := strings.ToLower(name)
	ix.exact[full] = append(ix.exact[full], d)
	ix.prefix = append(ix.prefix, nameKey{key: full, doc: d})
	if _, short, ok := splitMCPName(full); ok && short != "" {
		ix.exact[short] = append(ix.exact[short], d)
		ix.prefix = append(ix.prefix, nameKey{key: short, doc: d})
	}
}

// Len is the number of indexed tools.
func (ix *Index) Len() int { return len(ix.docs) }

type candidate struct {
	doc   int32
	tier  uint8 // 0 exact name, 1 name prefix, 2 BM25 only
	score float64
}

func (a candidate) before(b candidate) bool {
	if a.tier != b.tier {
		return a.tier < b.tier
	}
	if a.score != b.score {
		return a.score > b.score
	}
	return a.doc < b.doc
}

// Search returns up to k tools for query, best first: name matches (when
// enabled), then BM25 score descending, ties by index order. Only tools
// with a positive score or a name match are returned. skip, when non-nil,
// excludes tools by name before the cut to k.
func (ix *Index) Search(query string, k int, skip func(name string) bool) []Hit {
	if k <= 0 || len(ix.docs) == 0 {
		return nil
	}
	sc, _ := ix.scratch.Get().(*scratch)
	if sc == nil || len(sc.scores) != len(ix.docs) {
		sc = &scratch{scores: make([]float64, len(ix.docs))}
	}
	defer func() {
		for _, d := range sc.touched {
			sc.scores[d] = 0
		}
		sc.touched, sc.terms = sc.touched[:0], sc.terms[:0]
		ix.scratch.Put(sc)
	}()
	ix.an.each(query, nil, func(w []byte) {
		if id, ok := ix.terms[string(w)]; ok && !slices.Contains(sc.terms, id) {
			sc.terms = append(sc.terms, id) // a repeated query word counts once
		}
	})
	scores := sc.scores
	for _, id := range sc.terms {
		idf := ix.idf[id]
		for _, p := range ix.postings[id] {
			if scores[p.doc] == 0 {
				sc.touched = append(sc.touched, p.doc)
			}
			scores[p.doc] += idf * float64(p.w)
		}
	}
	var tiers map[int32]uint8
	if ix.opts.NameMatch {
		tiers = ix.nameMatches(query)
	}
	// Name matches go in first, so while scanning BM25 scores a full top
	// list makes its last score a cheap cut-off.
	top := make([]candidate, 0, k+1)
	consider := func(c candidate) {
		if skip != nil && skip(ix.docs[c.doc].Name) {
			return
		}
		i := sort.Search(len(top), func(i int) bool { return c.before(top[i]) })
		top = slices.Insert(top, i, c)
		if len(top) > k {
			top = top[:k]
		}
	}
	for d, tier := range tiers {
		consider(candidate{doc: d, tier: tier, score: scores[d]})
	}
	for _, d := range sc.touched {
		if len(top) == k {
			last := top[k-1]
			if last.tier < 2 || scores[d] < last.score || (scores[d] == last.score && d > last.doc) {
				continue
			}
		}
		if len(tiers) > 0 {
			if _, named := tiers[d]; named {
				continue
			}
		}
		consider(candidate{doc: d, tier: 2, score: scores[d]})
	}
	hits := make([]Hit, len(top))
	for i, c := range top {
		doc := ix.docs[c.doc]
		hits[i] = Hit{Name: doc.Name, Description: doc.Description, Score: c.score, NameMatch: c.tier < 2}
	}
	return hits
}

// nameMatches finds tools the query names: the whole query equal to or a
// prefix (3+ characters) of a full or short name, or a name-like word in it
// ("create_issue", "mcp__github__get_me") equal to a name.
func (ix *Index) nameMatches(query string) map[int32]uint8 {
	q := strings.ToLower(strings.Trim(strings.TrimSpace(query), "`'\""))
	if q == "" {
		return nil
	}
	out := map[int32]uint8{}
	for _, d := range ix.exact[q] {
		out[d] = 0
	}
	if len(q) >= 3 && !strings.ContainsAny(q, " \t\n") {
		i := sort.Search(len(ix.prefix), func(i int) bool { return ix.prefix[i].key >= q })
		for n := 0; i < len(ix.prefix) && n < maxPrefixMatches && strings.HasPrefix(ix.prefix[i].key, q); i, n = i+1, n+1 {
			if _, ok := out[ix.prefix[i].doc]; !ok {
				out[ix.prefix[i].doc] = 1
			}
		}
	}
	for _, w := range strings.Fields(q) {
		w = strings.Trim(w, "`'\".,;:()[]{}!?")
		if !strings.ContainsAny(w, "_-./") {
			continue
		}
		for _, d := range ix.exact[w] {
			out[d] = 0
		}
	}
	return out
}

// splitMCPName splits "mcp__server__tool" into server and tool.
func splitMCPName(name string) (server, short string, ok bool) {
	rest, found := strings.CutPrefix(name, "mcp__")
	if !found {
		return "", "", false
	}
	server, short, found = strings.Cut(rest, "__")
	if !found || server == "" {
		return "", "", false
	}
	return server, short, true
}
