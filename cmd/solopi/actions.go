package main

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/outcome"
	"github.com/solopi-dev/solopi/protocol"
)

type actionsResult struct {
	Success      bool                   `json:"success"`
	Protocol     string                 `json:"agentProtocolVersion"`
	Count        int                    `json:"count"`
	AgentActions []protocol.TypedAction `json:"agentActions"`
}

func actionsCommand(exit *int, e env) *cli.Command {
	return &cli.Command{
		Name:      "actions",
		Usage:     "list the 7 typed Agent actions and their argument rules (local, no device)",
		UsageText: "solopi actions",
		Action: action(exit, e, func(ctx context.Context, g *globals, c *cli.Context) (outcome.Result, error) {
			acts := protocol.TypedActions()
			return outcome.OK(actionsResult{Success: true, Protocol: protocol.AgentProtocolVersion, Count: len(acts), AgentActions: acts}), nil
		}),
	}
}
