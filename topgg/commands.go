package topgg

import (
	"context"
	"encoding/json"
	"net/http"
)

// SetCommands overwrites the listing's slash commands with defs (PUT
// /v1/projects/@me/commands). Each element is one already-encoded Discord
// application-command object; an empty or nil slice clears the list. Only a Discord
// bot project has commands: when the client knows the project is another kind, it
// fails validation without a request.
func (c *Client) SetCommands(ctx context.Context, defs []json.RawMessage) error {
	if err := c.checkCommands(defs); err != nil {
		return err
	}
	if defs == nil {
		defs = []json.RawMessage{}
	}
	_, err := c.do(ctx, &call{method: http.MethodPut, path: c.project.v1Path("/commands"), body: defs, idempotent: true, family: "v1:commands", route: RouteCommands}, nil)
	return err
}
