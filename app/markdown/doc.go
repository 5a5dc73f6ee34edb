// Package markdown renders Markdown, the text of agent messages and task
// descriptions, as go-app elements: Render(src) returns a div of class
// "markdown" (styled under "Markdown" at the end of web/static/app.css).
//
// # What it supports
//
// CommonMark, parsed by goldmark, plus GitHub's tables, strikethrough,
// task list items and autolinks (bare URLs, www. names and addresses):
//
//   - Headings, shifted two levels so that a message's "# Title" stays
//     below the page's own h1 and h2: # is h3, ## is h4, ### is h5, and
//     ####, ##### and ###### are h6.
//   - Paragraphs, emphasis (em, strong), strikethrough (del), code spans,
//     hard breaks (br) and soft breaks (a line ending in the text).
//   - Fenced and indented code blocks as pre > code; a fence's language
//     becomes class "language-x" and data-lang "x" only when it is a plain
//     token, [A-Za-z0-9_+-]{1,32}.
//   - Block quotes, thematic breaks, bullet and ordered lists (with their
//     start number), task items (li.task with a disabled check box).
//   - Tables inside div.md-table, with each column's alignment.
//   - Links, autolinks and reference links, to absolute http, https and
//     mailto URLs only, opening in a new tab (target=_blank, rel="noopener
//     noreferrer nofollow"); link titles are dropped, and a link without
//     text shows its URL. A link to anything else, relative URLs included,
//     shows as its text.
//   - Images as a link (a.md-image) to the image labelled with its
//     alternative text: a message never makes the browser load anything.
//     Inside a link's text, where an anchor cannot hold another, images
//     and autolinks are their text.
//   - Raw HTML, inline or as a block (p.md-raw), shown as the literal text
//     it was written as.
//
// Unfinished Markdown, as in a message still streaming in, renders as far
// as it goes: an unclosed fence is a code block to the end, half a table
// is a table of the rows so far.
//
// # Why it is safe
//
// Nothing is rendered to an HTML string and app.Raw is never used: the
// package walks goldmark's syntax tree and builds each element with go-app,
// so every character of the source reaches the page inside a text node,
// which cannot become markup. The only attribute values that come from the
// source are URLs and language names, and both are checked against an
// allow-list first. That matters more than usual because go-app's
// server-side encoder writes attribute values with Go's string quoting,
// not HTML escaping: a URL is re-serialised after url.Parse and refused if
// its serialised form has anything but printable ASCII or has one of
// " ' < > \ `, so no URL can end its attribute.
//
// # Bounds
//
// A message is its sender's to make, so every cost is bounded:
//
//   - Only the first 64 KiB (DefaultMaxBytes, or MaxBytes) are parsed;
//     the rest is replaced by a note (p.markdown-truncated) giving its size.
//   - Invalid UTF-8 is replaced with U+FFFD before parsing.
//   - Content nested more than 32 levels deep (maxDepth: 32 block quotes,
//     16 lists, inline markup counted too) renders as plain text; block
//     quotes and lists beyond it are not even opened by the parser, whose
//     work grows with the number of open blocks.
//   - A table of more than 8192 cells (maxTableCells) stays a paragraph:
//     goldmark pads every row to the header's width, which could otherwise
//     turn a few kilobytes into millions of cells.
//   - Links carry in all at most four bytes of URL per byte of source (plus
//     1 KiB); past that they show as their text. A reference definition can
//     be used any number of times, so its URL could otherwise be repeated
//     into markup that grows as the square of the source.
//   - In a block (paragraph, heading, table cell) longer than 4 KiB
//     (maxInlineBytes), links, images, emphasis and strikethrough are left
//     as the text they were written as; bare URLs, autolinks and code spans
//     still render. goldmark parses those constructs in time that grows as
//     the square of the block on some inputs (seconds for one hostile
//     64 KiB paragraph); bounded so, the worst known 64 KiB source renders
//     in about a quarter of a second, a typical one in a few milliseconds
//     (BenchmarkRender).
//
// Render is safe for concurrent use; it starts no goroutines.
package markdown
