;;; tandem in agent-shell (xenodium/agent-shell, built on acp.el).
;; Evaluate this (or put it in your init file), then M-x agent-shell and pick "tandem".
;; Run `tandem login' once first: tandem then uses the server, model and key it saved, so
;; the command needs no arguments (--provider, --model ... would override the login). A key
;; can also come from Emacs's environment (OPENAI_API_KEY, e.g. with `setenv'). agent-shell
;; authenticates with tandem's one auth method, "api-key", which fails early with a clear
;; message when no key is found.
(require 'agent-shell)

(defun tandem-agent-shell-config ()
  "An agent-shell configuration that starts tandem."
  (agent-shell-make-agent-config
   :identifier 'tandem
   :mode-line-name "tandem"
   :buffer-name "tandem"
   :shell-prompt "tandem> "
   :shell-prompt-regexp "tandem> "
   :needs-authentication t
   :authenticate-request-maker (lambda ()
                                 (acp-make-authenticate-request :method-id "api-key"))
   :client-maker (lambda (buffer)
                   (acp-make-client :context-buffer buffer
                                    :command "tandem"))))

(add-to-list 'agent-shell-agent-configs (tandem-agent-shell-config))
