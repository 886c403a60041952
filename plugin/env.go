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

	"github.com/dblkit/go-topgg/internal/discord"
	"github.com/dblkit/go-topgg/internal/httpx"
	"github.com/dblkit/go-topgg/topgg"
)

// LoadEnv fills the struct target points to from its `env:"NAME"` tags (lookuper nil:
// the environment), keeping fields already set, and validates every Config in it
// (an Env's with the floors of [Config.Validate] for a client at TOPGG_API_URL).
// A bad value or a TOPGG_ variable nothing reads is a *topgg.ConfigError naming it.
func LoadEnv(ctx context.Context, target any, lookuper envconfig.Lookuper) error {
	v := reflect.ValueOf(target)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("%w: LoadEnv needs a non-nil pointer to a struct, not %T", errNilArg, target)
	}
	if lookuper == nil {
		lookuper = envconfig.OsLookuper()
	}
	s := &strict{ctx: ctx, look: lookuper, fields: map[string]envField{}, read: map[string]bool{}}
	if err := s.collect(v.Elem(), v.Elem().Type().String(), map[reflect.Type]bool{}); err != nil {
		return err
	}
	if err := s.checkUnknown(lookuper); err != nil {
		return err
	}
	err := envconfig.ProcessWith(ctx, &envconfig.Config{
		Target:   target,
		Lookuper: envconfig.LookuperFunc(s.lookup),
		// Else go-envconfig allocates a nil pointer field whose variable is
		// unset, and nil means the default.
		DefaultNoInit: true,
	})
	switch {
	case s.refused != nil: // the first value refused; go-envconfig saw it unset
		return s.refused
	case errors.Is(err, envconfig.ErrMissingRequired):
		return &topgg.ConfigError{Field: s.fields[s.last].path, Variable: s.last, Problem: "is required but not set"}
	case err != nil:
		return fmt.Errorf("plugin: LoadEnv: %w", err) // a tag or type mistake: no variable is to blame
	}
	return validateAll(v.Elem(), s.read)
}

// envField is a tagged field LoadEnv reads: its path, type and whether code set it.
type envField struct {
	path string
	typ  reflect.Type
	kept bool
}

// strict is the go-envconfig lookup that holds LoadEnv's rules: it hands
// go-envconfig only values they accept, and records a refused one, given as
// unset. (Not a Mutator: go-envconfig calls none for a type that decodes
// itself, and such a field set in code would be overwritten.)
type strict struct {
	ctx     context.Context
	look    envconfig.Lookuper
	fields  map[string]envField // by variable
	read    map[string]bool     // variables whose value came from the environment
	last    string              // the last variable looked up: the missing one on ErrMissingRequired
	refused *topgg.ConfigError  // the first value refused
}

// collect records the tagged fields of v, refusing types go-envconfig reads loosely.
func (s *strict) collect(v reflect.Value, path string, seen map[reflect.Type]bool) error {
	t := v.Type()
	if seen[t] {
		return fmt.Errorf("plugin: LoadEnv: %s: struct type %s is recursive", path, t)
	}
	seen[t] = true
	defer delete(seen, t)
	for i := range t.NumField() {
		f, fv := t.Field(i), v.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("env"), ",")
		if name = strings.TrimSpace(name); !f.IsExported() {
			continue // go-envconfig refuses it when tagged
		}
		if strings.Contains(strings.ToLower(opts), "prefix=") {
			return fmt.Errorf("plugin: LoadEnv: field %s: env tag option prefix= is not supported", path+"."+f.Name)
		}
		kept := !fv.IsZero()
		for fv.Kind() == reflect.Pointer {
			if fv.IsNil() {
				fv = reflect.New(fv.Type().Elem())
			}
			fv = fv.Elem()
		}
		fpath := path + "." + f.Name
		switch {
		case name != "" && readable(fv.Type()):
			s.fields[name] = envField{path: fpath, typ: fv.Type(), kept: kept}
		case fv.Kind() == reflect.Struct:
			if err := s.collect(fv, fpath, seen); err != nil {
				return err
			}
		case name != "":
			return fmt.Errorf("plugin: LoadEnv: field %s has type %s, which LoadEnv does not read (give it an EnvDecode or UnmarshalText method)", fpath, f.Type)
		}
	}
	return nil
}

// lookup reads key and checks its value against the type of its field.
func (s *strict) lookup(key string) (string, bool) {
	s.last = key
	val, set := s.look.Lookup(key)
	f, ok := s.fields[key]
	if !ok || !set || s.refused != nil {
		return val, set && s.refused == nil
	}
	if f.kept {
		return "", false // set in code: kept, the variable is not read
	}
	problem := "is set but empty; unset it to take the default"
	if val != "" {
		val, problem = strictValue(s.ctx, f.typ, val)
	}
	if problem != "" {
		s.refused = &topgg.ConfigError{Field: f.path, Variable: key, Problem: problem}
		return "", false
	}
	s.read[key] = true
	return val, true
}

// decoder returns the decoder of a new T, in go-envconfig's order, or nil
// when T does not decode itself.
func decoder(ctx context.Context, t reflect.Type) func(string) error {
	switch d := reflect.New(t).Interface().(type) {
	case envconfig.DecoderCtx:
		return func(v string) error { return d.EnvDecode(ctx, v) }
	case envconfig.Decoder:
		return d.EnvDecode
	case encoding.TextUnmarshaler:
		return func(v string) error { return d.UnmarshalText([]byte(v)) }
	}
	return nil
}

// readable reports a field type whose values strictValue checks.
func readable(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return decoder(context.Background(), t) != nil
}

// strictValue returns val as go-envconfig should decode it for type t, or
// what is wrong with it, without quoting it.
func strictValue(ctx context.Context, t reflect.Type, val string) (string, string) {
	if decode := decoder(ctx, t); decode != nil {
		// Decoded once here, on a copy, so that its error names the variable.
		if err := decode(val); err != nil {
			return "", malformed(t, val, err)
		}
		return val, ""
	}
	switch {
	case t == durationType:
		if _, err := time.ParseDuration(val); err != nil {
			return "", "the value is not a duration such as 90s or 1h30m"
		}
	case t.Kind() == reflect.Bool:
		b, ok := map[string]string{"true": "true", "1": "true", "false": "false", "0": "false"}[strings.ToLower(val)]
		if !ok {
			return "", "the value is not true, false, 1 or 0"
		}
		return b, ""
	case t.Kind() != reflect.String:
		return val, checkDecimal(val, t.Bits(), t.Kind() <= reflect.Int64)
	}
	return val, ""
}

// malformed says that the decoder of t refused val, keeping a foreign
// decoder's message only when it shows no trace of val.
func malformed(t reflect.Type, val string, err error) string {
	if t.PkgPath() == configType.PkgPath() {
		return "the value is malformed: " + err.Error()
	}
	if msg, ok := withoutValue(err.Error(), val); ok {
		return "is malformed: " + msg
	}
	return "is malformed (the decoder's reason is not shown: it quotes part of the value)"
}

// minTrace is the shortest run of a value's bytes that counts as showing it.
const minTrace = 4

// withoutValue returns msg with val replaced by "the value", and false when
// msg still holds a run of minTrace bytes of val (a part of a secret).
func withoutValue(msg, val string) (string, bool) {
	const hole = "\x00"
	msg = httpx.Words(strings.ReplaceAll(msg, strconv.Quote(val), hole), hole, val)
	for i := 0; i+minTrace <= len(val); i++ {
		if strings.Contains(msg, val[i:i+minTrace]) {
			return "", false
		}
	}
	return strings.ReplaceAll(msg, hole, "the value"), true
}

// checkDecimal checks a decimal integer as written: no plus sign, no leading
// zero ("010" would surprise as 8 or 10), in range.
func checkDecimal(val string, bits int, signed bool) string {
	_, err := strconv.ParseUint(val, 10, bits)
	if signed {
		_, err = strconv.ParseInt(val, 10, bits)
	}
	digits := strings.TrimPrefix(val, "-")
	switch {
	case strings.HasPrefix(val, "+") || errors.Is(err, strconv.ErrSyntax):
		return "the value is not a decimal whole number"
	case len(digits) > 1 && digits[0] == '0':
		return "the value has a leading zero; write the number in decimal without it"
	case err != nil:
		return "the value is out of range"
	}
	return ""
}

var (
	configType   = reflect.TypeFor[Config]()
	envType      = reflect.TypeFor[Env]()
	durationType = reflect.TypeFor[time.Duration]()
)

// validateAll validates every Config in the struct v, at any depth: an Env's
// with the floors of a client at its TOPGG_API_URL, where it is known whether
// a value came from the environment.
func validateAll(v reflect.Value, read map[string]bool) error {
	if v.Type() == configType {
		return validateLoaded(v.Interface().(Config), read, false) // no client: no floors
	}
	if v.Type() == envType {
		e := v.Interface().(Env)
		if err := e.validate(); err != nil {
			return err
		}
		c, err := topgg.New(e.TopggToken.Reveal(), topgg.WithBaseURL(e.TopggAPIURL))
		if err != nil { // Env.Client refuses it, naming its variable, before any floor
			return validateLoaded(e.Config, read, false)
		}
		return validateLoaded(e.Config, read, !c.Loopback())
	}
	for i := range v.NumField() {
		f := v.Field(i)
		for f.Kind() == reflect.Pointer && !f.IsNil() {
			f = f.Elem()
		}
		if f.Kind() == reflect.Struct && v.Type().Field(i).IsExported() {
			if err := validateAll(f, read); err != nil {
				return err
			}
		}
	}
	return nil
}

// configVariable returns the variable of the Config field named field.
func configVariable(field string) string {
	f, _ := configType.FieldByName(field)
	name, _, _ := strings.Cut(f.Tag.Get("env"), ",")
	return strings.TrimSpace(name)
}

// validateLoaded validates c, with the interval floors or not, naming the
// variable of a bad field read or left zero. A variable setting a non-pointer
// field to zero is refused: in code, zero means "the default".
func validateLoaded(c Config, read map[string]bool, floors bool) error {
	v := reflect.ValueOf(c)
	for i := range configType.NumField() {
		f := configType.Field(i)
		if name := configVariable(f.Name); read[name] && f.Type.Kind() != reflect.Pointer && v.Field(i).IsZero() {
			return &topgg.ConfigError{Field: "plugin.Config." + f.Name, Variable: name,
				Problem: "0 would mean the default here; unset the variable for the default, or give a value"}
		}
	}
	err := c.validate(floors)
	if ce, ok := errors.AsType[*topgg.ConfigError](err); ok {
		// A rule that ties two settings blames the missing one, which the
		// operator sets by variable.
		field := strings.TrimPrefix(ce.Field, "plugin.Config.")
		if fv := v.FieldByName(field); read[configVariable(field)] || (fv.IsValid() && fv.IsZero()) {
			ce.Variable = configVariable(field)
		}
	}
	return err
}

// Credential holds a token or a URL with a password in a configuration struct
// that LoadEnv fills. It prints as [redacted] with every fmt verb, in slog
// and in text encoders, and as an empty string when unset.
type Credential struct{ p *string } // a pointer: fmt reflecting into a field prints an address, not the value

// NewCredential returns a Credential holding s (set, even when s is empty).
func NewCredential(s string) Credential { return Credential{&s} }

// Reveal returns the value ("" when unset), for the one call that uses it.
func (s Credential) Reveal() string {
	if s.p == nil {
		return ""
	}
	return *s.p
}

// EnvDecode lets LoadEnv read the value from its variable.
func (s *Credential) EnvDecode(v string) error { s.p = &v; return nil }

// Format prints [redacted], or nothing when unset, whatever the verb.
func (s Credential) Format(f fmt.State, verb rune) {
	b, _ := s.MarshalText()
	fmt.Fprintf(f, fmt.FormatString(f, verb), string(b))
}

// MarshalText gives encoders that skip Format (slog, JSON) [redacted], or
// nothing when unset.
func (s Credential) MarshalText() ([]byte, error) {
	if s.p == nil {
		return nil, nil
	}
	return []byte(httpx.Redacted), nil
}

// Snowflake is a Discord ID read from a variable (decimal, below 2^64, no
// leading zero); empty is unset.
type Snowflake string

// EnvDecode refuses what is not a Discord ID; its error quotes no value.
func (id *Snowflake) EnvDecode(v string) error {
	if !discord.ValidID(v) {
		return errors.New("not a Discord id (a decimal number below 2^64, without a leading zero)")
	}
	*id = Snowflake(v)
	return nil
}
