package agent

import (
	acp "github.com/coder/acp-go-sdk"

	"github.com/herd-dev/herd/shared"
)

// PromptCapabilities returns what the agent takes in a prompt beyond text,
// as its initialize answer advertised it.
func (e *Execution) PromptCapabilities() shared.PromptCapabilities { return e.promptCaps }

// promptCapabilitiesOf keeps the ACP prompt capabilities herd reads.
func promptCapabilitiesOf(c acp.PromptCapabilities) shared.PromptCapabilities {
	return shared.PromptCapabilities{Image: c.Image, Audio: c.Audio, EmbeddedContext: c.EmbeddedContext}
}

// promptBlocks is a prompt as ACP content: its text first, then each
// attachment as herd stored it (sessions resolves them against the
// session's worktree and the agent's capabilities before they are
// stored). An attachment of a type herd does not know is left out rather
// than sent as something else.
func promptBlocks(text string, attachments []shared.Attachment) []acp.ContentBlock {
	blocks := make([]acp.ContentBlock, 0, 1+len(attachments))
	blocks = append(blocks, acp.TextBlock(text))
	for _, a := range attachments {
		switch a.Type {
		case shared.AttachmentImage:
			blocks = append(blocks, acp.ImageBlock(a.Data, a.MimeType))
		case shared.AttachmentFile:
			if a.URI == "" {
				continue
			}
			var mime *string
			if a.MimeType != "" {
				mime = &a.MimeType
			}
			if a.Embedded {
				blocks = append(blocks, acp.ResourceBlock(acp.EmbeddedResourceResource{
					TextResourceContents: &acp.TextResourceContents{Uri: a.URI, Text: a.Text, MimeType: mime},
				}))
				continue
			}
			link := acp.ResourceLinkBlock(a.Path, a.URI)
			link.ResourceLink.MimeType = mime
			if a.Size > 0 {
				size := int(a.Size)
				link.ResourceLink.Size = &size
			}
			blocks = append(blocks, link)
		}
	}
	return blocks
}
