package topgg

// projectRef names the project that v1 paths act on. Today it is always "@me",
// the project that owns the token (the only one v1 lets a token reach); every v1
// path is built here, so that explicit project ids can come later without
// touching the calls.
type projectRef string

// projectMe is the token's own project.
const projectMe projectRef = "@me"

// v1Path returns the path of a v1 project route below the base URL: sub is ""
// for the project itself, or starts with "/" ("/metrics", "/votes/123").
func (p projectRef) v1Path(sub string) string { return "/v1/projects/" + string(p) + sub }
