package mdcheck

import "testing"

// TestUnsafe: the checker flags every way text can become HTML or a scheme
// link, and nothing in text, code and relative links.
func TestUnsafe(t *testing.T) {
	for _, c := range []struct {
		name, md string
		unsafe   bool
	}{
		{"text", "a & b, x &lt; 1, \\<b\\>", false},
		{"raw tag", "a <script>alert(1)</script>", true},
		{"raw in a table", "| a | <img src=x onerror=alert(1)> |", true},
		{"in a code span", "see `<script>` here", false},
		{"a code span closed early", "see `` ` <script> ` `` and ` x ` <b>", true},
		{"an escaped backtick opens no span", "\\`<script>\\`", true},
		{"a span across lines", "a ` b\nc ` <script> `", true},
		{"in a fenced block", "```text\n<script>alert(1)</script>\n```\n", false},
		{"a fence closed early", "```text\nx\n```\n<script>alert(1)</script>\n```\n", true},
		{"a longer fence", "````text\n```\n<script>\n````\n", false},
		{"a tilde fence is not closed by backticks", "~~~\n```\n<b>\n~~~\n", false},
		{"scheme link", "[x](javascript:alert(1))", true},
		{"scheme image", "![x](http://example.com/t.png)", true},
		{"escaped link", "\\[x\\](javascript:alert(1))", false},
		{"relative links", "[a](#anchor) [b](analysis.md#x) ![c](figures/a/b.png)", false},
	} {
		if got := Unsafe(c.md); (len(got) > 0) != c.unsafe {
			t.Errorf("%s: %q: %v, want unsafe %v", c.name, c.md, got, c.unsafe)
		}
	}
}
