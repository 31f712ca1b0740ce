package llmtest

// wireFormats maps a request path suffix to the encoder that answers it.
// This is the one place a new wire format is registered: add its line here
// (e.g. "/messages": encodeAnthropic from anthropic.go). Tests can also add
// or replace an encoder at run time with Server.Handle.
func wireFormats() map[string]Encoder {
	return map[string]Encoder{
		"/chat/completions": encodeOpenAI,
		"/messages":         encodeAnthropic,
	}
}
