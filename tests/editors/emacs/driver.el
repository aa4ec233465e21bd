;;; driver.el --- headless Emacs + eglot driver for tests/editors/test_emacs.py  -*- lexical-binding: t; -*-
;; Loads the packaged editors/emacs/tclint-eglot.el as a user's init would, opens TCLINT_FILE,
;; starts eglot, waits for flymake diagnostics, applies the quick fix for TCLINT_FIX_CODE, runs
;; `tclint-probe' on TCLINT_PROBE_LINE, and writes JSON to TCLINT_OUT.
;; Run: emacs --batch -q -l driver.el   (-q, not -Q: site-start activates Debian's elpa-eglot)

(add-to-list 'load-path (getenv "TCLINT_EMACS_DIR"))
(require 'tclint-eglot)
(require 'flymake)
(require 'json)

(setq tclint-python (getenv "TCLINT_PYTHON")
      tclint-server-command (and (getenv "TCLINT_SERVER_CMD") (json-read-from-string (getenv "TCLINT_SERVER_CMD")))
      eglot-sync-connect t
      eglot-connect-timeout 60
      eglot-events-buffer-size 0
      make-backup-files nil)
(when tclint-server-command
  (setq tclint-server-command (append tclint-server-command nil)))
(tclint-eglot-setup)

(defvar drv-timeout (string-to-number (or (getenv "TCLINT_TIMEOUT") "60")))
(defvar drv-result (list (cons 'emacs emacs-version)))

(defun drv-finish (code)
  (with-temp-file (getenv "TCLINT_OUT") (insert (json-encode drv-result)))
  (kill-emacs code))

(defun drv-wait (pred secs)
  (let ((deadline (+ (float-time) secs)))
    (while (and (not (funcall pred)) (< (float-time) deadline))
      (accept-process-output nil 0.05)
      (when (bound-and-true-p flymake-mode) (flymake-start)))
    (funcall pred)))

(defun drv-code (d)
  (let ((lsp (alist-get 'eglot-lsp-diag (flymake-diagnostic-data d))))
    (plist-get lsp :code)))

(defun drv-diagnostics ()
  (vconcat (mapcar (lambda (d)
                     (list (cons 'line (line-number-at-pos (flymake-diagnostic-beg d)))
                           (cons 'code (drv-code d))
                           (cons 'type (symbol-name (flymake-diagnostic-type d)))
                           (cons 'text (flymake-diagnostic-text d))))
                   (sort (flymake-diagnostics) (lambda (a b) (< (flymake-diagnostic-beg a) (flymake-diagnostic-beg b)))))))

(condition-case err
    (progn
      (find-file (getenv "TCLINT_FILE"))
      (python-mode)
      (apply #'eglot (eglot--guess-contact))
      (push (cons 'server_command (process-command (jsonrpc--process (eglot-current-server)))) drv-result)
      (unless (drv-wait (lambda () (flymake-diagnostics)) drv-timeout)
        (push '(error . "timeout waiting for diagnostics") drv-result)
        (drv-finish 3))
      (push (cons 'diagnostics (drv-diagnostics)) drv-result)
      (let ((fix-code (getenv "TCLINT_FIX_CODE")))
        (when fix-code
          (let* ((server (eglot-current-server))
                 (diag (seq-find (lambda (d) (equal (drv-code d) fix-code)) (flymake-diagnostics)))
                 (lsp-diag (alist-get 'eglot-lsp-diag (flymake-diagnostic-data diag)))
                 (actions (jsonrpc-request server :textDocument/codeAction
                                           (list :textDocument (eglot--TextDocumentIdentifier)
                                                 :range (plist-get lsp-diag :range)
                                                 :context (list :diagnostics (vector lsp-diag)))))
                 (action (seq-find (lambda (a) (plist-get a :edit)) actions)))
            (push (cons 'code_action_titles (vconcat (mapcar (lambda (a) (plist-get a :title)) actions))) drv-result)
            (unless action (error "no code action with an edit"))
            ;; apply the edit the way eglot applies a chosen code action
            (eglot--apply-workspace-edit (plist-get action :edit))
            (push (cons 'applied (plist-get action :title)) drv-result)
            (push (cons 'fixed_gone
                        (if (drv-wait (lambda () (not (seq-find (lambda (d) (equal (drv-code d) fix-code)) (flymake-diagnostics))))
                                      drv-timeout)
                            t :json-false))
                  drv-result)
            (push (cons 'buffer (buffer-substring-no-properties (point-min) (point-max))) drv-result))))
      (let ((line (getenv "TCLINT_PROBE_LINE")))
        (when line
          (goto-char (point-min))
          (forward-line (1- (string-to-number line)))
          (back-to-indentation)
          (tclint-probe)
          (push (cons 'probe tclint-last-probe) drv-result)
          (push (cons 'probe_text (with-current-buffer "*tclint-probe*" (buffer-string))) drv-result)))
      ;; shutdown: eglot 1.9 waits 1.5 s for the reply; record how it went, it is not the test
      (let ((t0 (float-time)))
        (condition-case e (eglot-shutdown (eglot-current-server))
          (error (push (cons 'shutdown_error (format "%S" e)) drv-result)))
        (push (cons 'shutdown_s (- (float-time) t0)) drv-result))
      (drv-finish 0))
  (error (push (cons 'error (format "%S" err)) drv-result) (drv-finish 4)))
