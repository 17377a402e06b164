package main

import (
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

var (
	// mdLink is an inline link or image, [text](target "title"), whose text
	// may hold one level of brackets.
	mdLink = regexp.MustCompile(`!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*<?([^\s)>]*)>?(?:\s+"[^"]*")?\s*\)`)
	// mdRefDef is a link reference definition, [label]: target.
	mdRefDef = regexp.MustCompile(`(?m)^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)`)
	// htmlLink is the target of an HTML img or a element.
	htmlLink = regexp.MustCompile(`<(?:img|a)\s[^>]*\b(?:src|href)="([^"]*)"`)
	// codeSpan is inline code, whose brackets are not links.
	codeSpan = regexp.MustCompile("`+[^`]*`+")
	// urlScheme starts an absolute URL (https:, mailto:), not checked here.
	urlScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
)

// TestDocsLinks checks every relative link and image of the README and
// the pages under docs/: its file exists inside the repository, and its
// #anchor names a heading of the Markdown page it points at, as GitHub
// generates anchors. No link is exempt.
func TestDocsLinks(t *testing.T) {
	anchors := map[string]map[string]bool{} // by page, relative to the root
	pageAnchors := func(page string) map[string]bool {
		if a, ok := anchors[page]; ok {
			return a
		}
		a := map[string]bool{}
		seen := map[string]int{}
		for _, h := range readMarkdown(t, page).headings {
			a[githubAnchor(h, seen)] = true
		}
		anchors[page] = a
		return a
	}
	checked := 0
	for _, page := range docPages(t) {
		for _, p := range readMarkdown(t, page).paragraphs {
			for _, l := range linkTargets(p.text) {
				checked++
				if err := checkLink(page, l.target, pageAnchors); err != "" {
					t.Errorf("%s:%d: link %q: %s", page, p.line+l.line, l.target, err)
				}
			}
		}
	}
	if checked < 30 {
		t.Errorf("checked %d links; the README alone links every docs page", checked)
	}
}

// TestReadmeLinksEveryDocsPage: the README is the landing page, so a page
// under docs/ that it does not link is a page no newcomer finds.
func TestReadmeLinksEveryDocsPage(t *testing.T) {
	linked := map[string]bool{}
	for _, p := range readMarkdown(t, "README.md").paragraphs {
		for _, l := range linkTargets(p.text) {
			file, _, _ := strings.Cut(l.target, "#")
			linked[path.Clean(file)] = true
		}
	}
	for _, page := range docPages(t)[1:] {
		if !linked[page] {
			t.Errorf("README.md does not link %s", page)
		}
	}
}

// link is a link's target and the line it is on within its paragraph,
// from 0.
type link struct {
	target string
	line   int
}

// linkTargets returns the links of a paragraph of Markdown, outside
// inline code.
func linkTargets(text string) []link {
	// Blank out code spans rather than cut them, so offsets keep their line.
	text = codeSpan.ReplaceAllStringFunc(text, func(code string) string {
		return strings.Map(func(r rune) rune {
			if r == '\n' {
				return r
			}
			return ' '
		}, code)
	})
	var out []link
	for _, re := range []*regexp.Regexp{mdLink, mdRefDef, htmlLink} {
		for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
			n := len(m)
			out = append(out, link{text[m[n-2]:m[n-1]], strings.Count(text[:m[0]], "\n")})
		}
	}
	return out
}

// checkLink says what is wrong with a link from page to target, or "".
func checkLink(page, target string, anchorsOf func(string) map[string]bool) string {
	if urlScheme.MatchString(target) {
		return ""
	}
	if target == "" {
		return "empty target"
	}
	file, anchor, _ := strings.Cut(target, "#")
	file, err := url.PathUnescape(file)
	if err != nil {
		return err.Error()
	}
	switch {
	case file == "":
		file = page
	case strings.HasPrefix(file, "/"):
		file = path.Clean(strings.TrimPrefix(file, "/"))
	default:
		file = path.Join(path.Dir(page), file)
	}
	if file == ".." || strings.HasPrefix(file, "../") {
		return "points outside the repository"
	}
	if _, err := os.Stat(filepath.Join(repoRoot, filepath.FromSlash(file))); err != nil {
		return "no such file: " + file
	}
	if anchor == "" {
		return ""
	}
	if !strings.HasSuffix(file, ".md") {
		return "an anchor into " + file + ", which is not a Markdown page"
	}
	if !anchorsOf(file)[anchor] {
		return "no heading of " + file + " has the anchor #" + anchor
	}
	return ""
}

// githubAnchor is the id GitHub gives a heading line: its text, links
// reduced to their text, lower-cased, with every character but letters,
// digits, '_', '-' and spaces dropped and spaces turned into '-'; the
// second heading with the same id gets "-1", the third "-2". seen counts
// the ids given so far on the page.
func githubAnchor(heading string, seen map[string]int) string {
	text := strings.TrimSpace(strings.TrimLeft(heading, "#"))
	text = mdLink.ReplaceAllString(text, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '_', r == '-':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	id := b.String()
	n := seen[id]
	seen[id]++
	if n > 0 {
		id += "-" + strconv.Itoa(n)
	}
	return id
}

// TestGitHubAnchor holds githubAnchor to anchors GitHub gave the
// README's headings.
func TestGitHubAnchor(t *testing.T) {
	for _, tc := range []struct{ headings, want []string }{
		{[]string{"## The real service's interface"}, []string{"the-real-services-interface"}},
		{[]string{"### On a Redis Cluster (`--redis-cluster`)"}, []string{"on-a-redis-cluster---redis-cluster"}},
		{[]string{"## Contract: speak the real service's shapes"}, []string{"contract-speak-the-real-services-shapes"}},
		{[]string{"## Shared mode (Redis)"}, []string{"shared-mode-redis"}},
		{[]string{"### Real clients: MSAL, azidentity, x/oauth2"}, []string{"real-clients-msal-azidentity-xoauth2"}},
		{[]string{"## Conformance report: gate CI on your client's behaviour"}, []string{"conformance-report-gate-ci-on-your-clients-behaviour"}},
		{[]string{"# Security: bounds, identity and secrets"}, []string{"security-bounds-identity-and-secrets"}},
		{[]string{"## See [the API](api.md)"}, []string{"see-the-api"}},
		{[]string{"## Checks", "## Checks", "## Checks"}, []string{"checks", "checks-1", "checks-2"}},
	} {
		seen := map[string]int{}
		for i, h := range tc.headings {
			if got := githubAnchor(h, seen); got != tc.want[i] {
				t.Errorf("githubAnchor(%q) = %q, want %q", h, got, tc.want[i])
			}
		}
	}
}
