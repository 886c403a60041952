package topgg

// Locale is a language code the service accepts for headlines and page content.
type Locale string

// The 16 locales the service supports.
const (
	LocaleEnglish    Locale = "en"
	LocaleGerman     Locale = "de"
	LocaleFrench     Locale = "fr"
	LocalePortuguese Locale = "pt"
	LocaleTurkish    Locale = "tr"
	LocaleHindi      Locale = "hi"
	LocaleJapanese   Locale = "ja"
	LocaleArabic     Locale = "ar"
	LocaleDutch      Locale = "nl"
	LocaleKorean     Locale = "ko"
	LocaleItalian    Locale = "it"
	LocaleSpanish    Locale = "es"
	LocaleRussian    Locale = "ru"
	LocaleUkrainian  Locale = "uk"
	LocaleVietnamese Locale = "vi"
	LocaleChinese    Locale = "zh"
)

// Valid reports whether l is one of the 16 supported locales.
func (l Locale) Valid() bool {
	switch l {
	case LocaleEnglish, LocaleGerman, LocaleFrench, LocalePortuguese, LocaleTurkish, LocaleHindi,
		LocaleJapanese, LocaleArabic, LocaleDutch, LocaleKorean, LocaleItalian, LocaleSpanish,
		LocaleRussian, LocaleUkrainian, LocaleVietnamese, LocaleChinese:
		return true
	}
	return false
}
