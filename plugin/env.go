package plugin

import (
	"context"
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/sethvargo/go-envconfig"
)

// LoadConfig reads a Config from the environment through lookuper (nil means the
// process environment) and validates it. Unset variables leave their fields zero
// (nil), which [New] reads as the defaults. Errors are *ConfigError naming the
// variable. To mix in values set in code, or load a bot's own struct, see [LoadEnv].
func LoadConfig(ctx context.Context, lookuper envconfig.Lookuper) (Config, error) {
	var c Config
	if err := LoadEnv(ctx, &c, lookuper); err != nil {
		return Config{}, err
	}
	return c, nil
}

// LoadEnv fills target, a pointer to a struct with `env:"NAME"` tags (a bot's own
// configuration embedding Config, say), from lookuper (nil means the process
// environment), then validates every Config it holds.
//
// Field by field, at any depth:
//   - a field already non-zero in target (set in code; for a pointer, non-nil even
//     if it points to false or 0) is kept, and its variable is not read;
//   - a zero field takes its variable's value when the variable is set, else the
//     `default=` of its tag (Config's tags have none: its defaults are applied
//     by [New], never written here), else it stays zero; a tag with `required`
//     makes an unset variable an error.
//
// Every value is read as written: a variable set but empty is an error (unset it
// for the default); integers are decimal (no sign +, no leading zero, no
// underscore, no hex or octal); booleans are true, false, 1 or 0; durations are
// Go durations such as 90s or 1h30m (0 needs no unit). Fields of other types
// must implement envconfig.Decoder or encoding.TextUnmarshaler. A bad value is a
// *ConfigError naming the variable; a value of a variable whose name says it is
// a secret (TOKEN, SECRET, PASSWORD, AUTH) is never quoted.
func LoadEnv(ctx context.Context, target any, lookuper envconfig.Lookuper) error {
	v := reflect.ValueOf(target)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("%w: LoadEnv needs a non-nil pointer to a struct, not %T", errNilArg, target)
	}
	if lookuper == nil {
		lookuper = envconfig.OsLookuper()
	}
	l := envLoader{ctx: ctx, look: lookuper}
	read, err := l.walk(v.Elem(), v.Elem().Type().Name())
	if err == nil && v.Elem().Type() == configType {
		err = validateLoaded(v.Elem().Interface().(Config), read)
	}
	return err
}

// envLoader walks a struct and fills it from the environment.
type envLoader struct {
	ctx  context.Context
	look envconfig.Lookuper
}

var configType = reflect.TypeFor[Config]()

// walk fills the fields of the struct v (named path in errors) and returns the
// variables it read, by field name. A Config it meets is validated once filled,
// and its error names the variable when the bad value came from it.
func (l envLoader) walk(v reflect.Value, path string) (map[string]string, error) {
	t := v.Type()
	read := map[string]string{}
	for i := range t.NumField() {
		f, fv := t.Field(i), v.Field(i)
		tag, tagged := f.Tag.Lookup("env")
		switch {
		case !f.IsExported():
			if tagged {
				return nil, fmt.Errorf("plugin: LoadEnv: field %s.%s is unexported and cannot be set", path, f.Name)
			}
		case !tagged:
			if f.Type.Kind() == reflect.Struct && !decodable(fv) {
				sub, err := l.walk(fv, f.Name)
				if err != nil {
					return nil, err
				}
				if f.Type == configType {
					if err := validateLoaded(fv.Interface().(Config), sub); err != nil {
						return nil, err
					}
				}
			}
		default:
			name, err := l.field(fv, tag, path+"."+f.Name)
			if err != nil {
				return nil, err
			}
			if name != "" {
				read[f.Name] = name
			}
		}
	}
	return read, nil
}

// validateLoaded validates c and, when the bad field was read from a variable,
// names the variable. A variable that sets a non-pointer field of Config to its
// zero ("0s", "0") is refused: that zero means "the default" in code, and an
// operator who writes 0 means something else (unset the variable for the
// default; the pointer fields read 0 and false as written: off).
func validateLoaded(c Config, read map[string]string) error {
	v := reflect.ValueOf(c)
	for i := range configType.NumField() {
		f := configType.Field(i)
		if name, ok := read[f.Name]; ok && f.Type.Kind() != reflect.Pointer && v.Field(i).IsZero() {
			return &ConfigError{Field: "Config." + f.Name, Variable: name,
				Problem: "0 would mean the default here; unset the variable for the default, or give a value"}
		}
	}
	err := c.Validate()
	var ce *ConfigError
	if errors.As(err, &ce) {
		if name, ok := read[strings.TrimPrefix(ce.Field, "Config.")]; ok {
			ce.Variable = name
		}
	}
	return err
}

// envTag is a parsed `env:"NAME, required, default=..."` tag.
type envTag struct {
	name     string
	required bool
	def      *string // nil: no default
}

// parseTag reads the tag of the field at path; options other than required and
// default= are refused, so that none is silently ignored.
func parseTag(tag, path string) (envTag, error) {
	name, opts, _ := strings.Cut(tag, ",")
	t := envTag{name: strings.TrimSpace(name)}
	if t.name == "" {
		return t, fmt.Errorf("plugin: LoadEnv: field %s has no variable name in its env tag", path)
	}
	for opts = strings.TrimSpace(opts); opts != ""; {
		var opt string
		opt, opts, _ = strings.Cut(opts, ",")
		opt, opts = strings.TrimSpace(opt), strings.TrimSpace(opts)
		switch {
		case opt == "required":
			t.required = true
		case strings.HasPrefix(opt, "default="):
			d := strings.TrimPrefix(opt, "default=")
			if opts != "" { // a default may hold commas: it takes the rest of the tag
				d += "," + opts
			}
			t.def, opts = &d, ""
		default:
			return t, fmt.Errorf("plugin: LoadEnv: field %s: env tag option %q is not supported (only required and default=)", path, opt)
		}
	}
	return t, nil
}

// field fills one tagged field. It returns the variable's name when the value came
// from the environment (not from a default, not kept from code).
func (l envLoader) field(fv reflect.Value, tag, path string) (string, error) {
	t, err := parseTag(tag, path)
	if err != nil {
		return "", err
	}
	if !readable(fv) {
		return "", fmt.Errorf("plugin: LoadEnv: field %s has type %s, which LoadEnv does not read (give it an EnvDecode or UnmarshalText method)", path, fv.Type())
	}
	if !fv.IsZero() {
		return "", nil // set in code: kept, the variable is not read
	}
	bad := func(problem string) error { return &ConfigError{Field: path, Variable: t.name, Problem: problem} }
	val, set := l.look.Lookup(t.name)
	switch {
	case set && val == "":
		return "", bad("is set but empty; unset it to take the default")
	case !set && t.required:
		return "", bad("is required but not set")
	case !set && t.def == nil:
		return "", nil
	case !set:
		val = *t.def
	}
	if problem := decode(l.ctx, fv, val, secretName(t.name)); problem != "" {
		return "", bad(problem)
	}
	if set {
		return t.name, nil
	}
	return "", nil
}

// secretName reports a variable whose value must not be quoted in an error.
func secretName(name string) bool {
	n := strings.ToUpper(name)
	return strings.Contains(n, "TOKEN") || strings.Contains(n, "SECRET") || strings.Contains(n, "PASSWORD") ||
		strings.Contains(n, "AUTH")
}

// decodable reports a field that decodes itself from one variable.
func decodable(fv reflect.Value) bool {
	if !fv.CanAddr() {
		return false
	}
	switch fv.Addr().Interface().(type) {
	case envconfig.Decoder, envconfig.DecoderCtx, encoding.TextUnmarshaler:
		return true
	}
	return false
}

var durationType = reflect.TypeFor[time.Duration]()

// readable reports a field type decode can set.
func readable(fv reflect.Value) bool {
	if decodable(fv) {
		return true
	}
	t := fv.Type()
	if t.Kind() == reflect.Pointer {
		return readable(reflect.New(t.Elem()).Elem())
	}
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// decode sets fv from val, read as written, and returns what is wrong with val, or
// "". secret keeps val out of the message.
func decode(ctx context.Context, fv reflect.Value, val string, secret bool) string {
	shown := strconv.Quote(val)
	if secret {
		shown = "the value"
	}
	if handled, problem := decodeSelf(ctx, fv, val, shown, secret); handled {
		return problem
	}
	if fv.Kind() == reflect.Pointer {
		p := reflect.New(fv.Type().Elem())
		if problem := decode(ctx, p.Elem(), val, secret); problem != "" {
			return problem
		}
		fv.Set(p)
		return ""
	}
	return decodeKind(fv, val, shown)
}

// decodeSelf decodes a field that decodes itself (envconfig.Decoder,
// encoding.TextUnmarshaler); handled is false for other fields.
func decodeSelf(ctx context.Context, fv reflect.Value, val, shown string, secret bool) (handled bool, problem string) {
	if !fv.CanAddr() {
		return false, ""
	}
	var err error
	switch d := fv.Addr().Interface().(type) {
	case envconfig.DecoderCtx:
		err = d.EnvDecode(ctx, val)
	case envconfig.Decoder:
		err = d.EnvDecode(val)
	case encoding.TextUnmarshaler:
		err = d.UnmarshalText([]byte(val))
	default:
		return false, ""
	}
	switch {
	case err == nil:
		return true, ""
	case secret: // the decoder's message may quote the value
		return true, "is malformed"
	}
	return true, fmt.Sprintf("%s is malformed: %v", shown, err)
}

// decodeKind decodes a duration, string, bool or integer field.
func decodeKind(fv reflect.Value, val, shown string) string {
	switch {
	case fv.Type() == durationType:
		d, err := time.ParseDuration(val)
		if err != nil {
			return fmt.Sprintf("%s is not a duration such as 90s or 1h30m", shown)
		}
		fv.SetInt(int64(d))
	case fv.Kind() == reflect.String:
		fv.SetString(val)
	case fv.Kind() == reflect.Bool:
		b, ok := map[string]bool{"true": true, "1": true, "false": false, "0": false}[strings.ToLower(val)]
		if !ok {
			return fmt.Sprintf("%s is not true, false, 1 or 0", shown)
		}
		fv.SetBool(b)
	case fv.CanInt(), fv.CanUint():
		n, problem := parseDecimal(val, shown, fv.Type().Bits(), fv.CanInt())
		if problem != "" {
			return problem
		}
		if fv.CanInt() {
			fv.SetInt(n)
		} else {
			fv.SetUint(uint64(n))
		}
	default: // readable refused it before
		return fmt.Sprintf("has type %s, which LoadEnv does not read", fv.Type())
	}
	return ""
}

// parseDecimal reads a decimal integer as written: an optional minus sign (when
// signed), then digits without a leading zero. "010" is refused, not read as 8 or
// 10: either would surprise someone.
func parseDecimal(val, shown string, bits int, signed bool) (int64, string) {
	digits := val
	if signed {
		digits = strings.TrimPrefix(val, "-")
	}
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return 0, fmt.Sprintf("%s is not a decimal whole number", shown)
	}
	if len(digits) > 1 && digits[0] == '0' {
		return 0, fmt.Sprintf("%s has a leading zero; write the number in decimal without it", shown)
	}
	if !signed {
		n, err := strconv.ParseUint(val, 10, bits)
		if err != nil {
			return 0, fmt.Sprintf("%s is out of range", shown)
		}
		return int64(n), "" // the bits are kept: the caller converts back to uint64
	}
	n, err := strconv.ParseInt(val, 10, bits)
	if err != nil {
		return 0, fmt.Sprintf("%s is out of range", shown)
	}
	return n, ""
}
