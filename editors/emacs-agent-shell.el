;;; tandem in agent-shell (xenodium/agent-shell, built on acp.el).
;; Evaluate this (or put it in your init file), then M-x agent-shell and pick "tandem".
(require 'agent-shell)

(defun tandem-agent-shell-config ()
  "An agent-shell configuration that starts tandem."
  (agent-shell-make-agent-config
   :mode-line-name "tandem"
   :buffer-name "tandem"
   :shell-prompt "tandem> "
   :shell-prompt-regexp "tandem> "
   :client-maker (lambda (buffer)
                   (acp-make-client :context-buffer buffer
                                    :command "tandem"
                                    :command-params '("--provider" "openai" "--model" "gpt-4o-mini")
                                    :environment-variables (list (concat "OPENAI_API_KEY=" (getenv "OPENAI_API_KEY")))))))

(add-to-list 'agent-shell-agent-configs (tandem-agent-shell-config))
