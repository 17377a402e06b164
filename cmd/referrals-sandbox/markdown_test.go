package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// repoRoot is the repository root, where README.md and docs/ are.
var repoRoot = filepath.Join("..", "..")

// docPages returns README.md and every Markdown page under docs/, as
// paths relative to the repository root: the project's manual.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatal("no pages under docs/")
	}
	out := []string{"README.md"}
	for _, p := range pages {
		rel, err := filepath.Rel(repoRoot, p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, filepath.ToSlash(rel))
	}
	return out
}

// markdown is what the docs' tests read of a Markdown file: its fenced
// blocks, its headings, and its paragraphs of text outside the blocks.
type markdown struct {
	blocks     []fencedBlock
	headings   []string // ATX headings, as written ("## docker run")
	paragraphs []paragraph
}

// fencedBlock is one ``` block: its info string (the language), its body
// and the headings it sits under, outermost first.
type fencedBlock struct {
	lang    string
	body    string
	line    int
	section []string
}

// paragraph is a run of lines outside fenced blocks with no blank line,
// joined by newlines; line is the number of its first.
type paragraph struct {
	text string
	line int
}

// readMarkdown parses the file at path (relative to the repository root).
// A line starting with # inside a fenced block is code, not a heading.
func readMarkdown(t *testing.T, path string) markdown {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(path)))
	if err != nil {
		t.Fatal(err)
	}
	var (
		md      markdown
		open    []string // the headings the current line sits under
		block   *fencedBlock
		body    strings.Builder
		para    []string
		paraAt  int
		endPara = func() {
			if len(para) > 0 {
				md.paragraphs = append(md.paragraphs, paragraph{strings.Join(para, "\n"), paraAt})
				para = nil
			}
		}
	)
	for i, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case block != nil && trimmed == "```":
			block.body = body.String()
			md.blocks = append(md.blocks, *block)
			block = nil
		case block != nil:
			body.WriteString(line + "\n")
		case strings.HasPrefix(trimmed, "```"):
			endPara()
			body.Reset()
			block = &fencedBlock{lang: strings.TrimSpace(strings.TrimPrefix(trimmed, "```")), line: i + 1, section: slices.Clone(open)}
		case headingLevel(line) > 0:
			endPara()
			md.headings = append(md.headings, line)
			level := headingLevel(line)
			open = slices.DeleteFunc(open, func(h string) bool { return headingLevel(h) >= level })
			open = append(open, line)
		case trimmed == "":
			endPara()
		default:
			if len(para) == 0 {
				paraAt = i + 1
			}
			para = append(para, line)
		}
	}
	if block != nil {
		t.Fatalf("%s:%d: a fenced block is never closed", path, block.line)
	}
	endPara()
	return md
}

// headingLevel is the level of an ATX heading line, 0 for any other line.
func headingLevel(line string) int {
	hashes, _, ok := strings.Cut(line, " ")
	if !ok || hashes == "" || len(hashes) > 6 || strings.Trim(hashes, "#") != "" {
		return 0
	}
	return len(hashes)
}

// fencedBlocks returns the bodies of the ```lang blocks of a Markdown
// file (relative to the repository root), in order: all of them when
// heading is empty, else those in the section the line heading starts.
func fencedBlocks(t *testing.T, path, lang, heading string) []string {
	t.Helper()
	var out []string
	for _, b := range readMarkdown(t, path).blocks {
		if b.lang == lang && (heading == "" || slices.Contains(b.section, heading)) {
			out = append(out, b.body)
		}
	}
	return out
}
