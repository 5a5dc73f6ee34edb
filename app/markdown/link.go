package markdown

import (
	"net/url"
	"strings"
)

// unsafeInAttribute lists the bytes a URL may not contain once serialised,
// besides spaces, controls and non-ASCII: go-app's server-side encoder
// writes attribute values with Go string quoting, not HTML escaping, so a
// double quote there would end the attribute (`\"` is no escape in HTML),
// and the others are kept out for the same reason in other contexts.
const unsafeInAttribute = "\"'<>\\`"

// safeURL returns dest re-serialised if it is an absolute http or https URL
// with a host, or a mailto URL, and if its serialised form is printable
// ASCII free of unsafeInAttribute; otherwise it reports false and the
// caller shows the link as text. Relative URLs are refused too: herd has no
// pages a message could sensibly point into, and a same-origin link would
// be followed by go-app's own navigation.
func safeURL(dest string) (string, bool) {
	u, err := url.Parse(dest)
	if err != nil {
		return "", false
	}
	switch u.Scheme { // url.Parse lowercases the scheme
	case "http", "https":
		if u.Host == "" {
			return "", false
		}
	case "mailto":
		if u.Opaque == "" {
			return "", false
		}
	default:
		return "", false
	}
	s := u.String()
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || strings.IndexByte(unsafeInAttribute, c) >= 0 {
			return "", false
		}
	}
	return s, true
}

// languageToken reports whether a fenced code block's language is a plain
// token, [A-Za-z0-9_+-]{1,32}, and so safe as a class name and attribute.
func languageToken(lang []byte) bool {
	if len(lang) == 0 || len(lang) > 32 {
		return false
	}
	for _, c := range lang {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '+', c == '-':
		default:
			return false
		}
	}
	return true
}
