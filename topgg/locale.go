package topgg

// Locale is a language code the service accepts for headlines and page
// content: one of en, de, fr, pt, tr, hi, ja, ar, nl, ko, it, es, ru, uk, vi, zh.
type Locale string

// Valid reports whether l is one of the 16 supported locales.
func (l Locale) Valid() bool {
	switch l {
	case "en", "de", "fr", "pt", "tr", "hi", "ja", "ar", "nl", "ko", "it", "es", "ru", "uk", "vi", "zh":
		return true
	}
	return false
}
