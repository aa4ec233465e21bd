;;; tclint-eglot.el --- tclint (torch.compile linter) through eglot  -*- lexical-binding: t; -*-

;; Usage, in your init file:
;;   (add-to-list 'load-path "/path/to/tclint/editors/emacs")
;;   (require 'tclint-eglot)
;;   (tclint-eglot-setup)            ; python-mode buffers use the tclint server with M-x eglot
;;   (add-hook 'python-mode-hook #'eglot-ensure)   ; optional: start it automatically
;;
;; Works with eglot 1.9 (Debian's elpa-eglot, Emacs 28) and the eglot built into Emacs 29+.
;; eglot runs one server per major mode: with this setup tclint is *the* Python server of eglot.
;; Commands: `tclint-probe' (the function at point, under TorchDynamo), `tclint-probe-file'.

;;; Code:

(require 'eglot)
(require 'jsonrpc)
(require 'subr-x)

(defgroup tclint nil
  "tclint, a linter for torch.compile hazards."
  :group 'tools
  :prefix "tclint-")

(defcustom tclint-python nil
  "Python interpreter that has tclint-torch[server] installed.
nil: $VIRTUAL_ENV/bin/python, else <project>/.venv/bin/python, else python3."
  :type '(choice (const :tag "Detect" nil) string))

(defcustom tclint-server-command nil
  "Full server command (a list of strings).
nil: the `tclint' console script beside the interpreter with
\"server\", else the interpreter with `tclint-server-bootstrap'."
  :type '(choice (const :tag "Default" nil) (repeat string)))

(defconst tclint-server-bootstrap
  "import sys; sys.path[:] = [p for p in sys.path if p]; from tclint.server.__main__ import main; sys.exit(main())"
  "What `python -c' runs instead of `python -m tclint.server'.
-m (and -c) put the working folder, the workspace, first on
sys.path, so a workspace holding a `tclint/' package would run its
own code in place of the server; this drops that entry before any
import.")

(defcustom tclint-settings nil
  "The server's settings, as a plist.
For example (:select [\"TC1\"] :unsafeFixes t).  Sent as
initializationOptions and as the `tclint' section of
workspace/configuration."
  :type 'plist)

(defcustom tclint-major-modes '(python-mode python-ts-mode)
  "Major modes the tclint server serves."
  :type '(repeat symbol))

(defun tclint--python (root)
  "The interpreter for the project at ROOT."
  (or tclint-python
      (let ((venv (getenv "VIRTUAL_ENV")))
        (and venv (file-executable-p (expand-file-name "bin/python" venv))
             (expand-file-name "bin/python" venv)))
      (seq-some (lambda (name)
                  (let ((p (expand-file-name (concat name "/bin/python") root)))
                    (and (file-executable-p p) p)))
                '(".venv" "venv"))
      "python3"))

(defun tclint--server-script (python)
  "The `tclint' console script of PYTHON's environment, or nil.
Beside PYTHON (bin/ or Scripts\\); for a bare interpreter name, the
`tclint' on PATH."
  (if (file-name-directory python)
      (seq-find #'file-executable-p
                (mapcar (lambda (name) (expand-file-name name (file-name-directory python)))
                        '("tclint" "tclint.exe")))
    (executable-find "tclint")))

(defun tclint-default-command (root)
  "The server command for the project at ROOT.
The environment's console script (`tclint server': its sys.path
starts at the script's folder, never the workspace), else the
interpreter with `tclint-server-bootstrap'; never `python -m'."
  (let* ((python (tclint--python root))
         (script (tclint--server-script python)))
    (if script (list script "server") (list python "-c" tclint-server-bootstrap))))

(defun tclint--contact (&optional _interactive)
  "The eglot contact for the current buffer's project."
  (let* ((project (and (fboundp 'project-current) (project-current)))
         (root (or (and project (if (fboundp 'project-root) (project-root project)
                                  (car (with-no-warnings (project-roots project)))))
                   default-directory))
         (cmd (or tclint-server-command (tclint-default-command root))))
    (append cmd (list :initializationOptions
                      (list :settings (or tclint-settings (make-hash-table)) :workspaceTrusted t)))))

;;;###autoload
(defun tclint-eglot-setup ()
  "Register the tclint server with eglot for `tclint-major-modes'."
  (setq eglot-server-programs
        (cons (cons tclint-major-modes #'tclint--contact)
              (seq-remove (lambda (entry)
                            (let ((modes (if (listp (car entry)) (car entry) (list (car entry)))))
                              (seq-some (lambda (m) (memq (if (consp m) (car m) m) tclint-major-modes)) modes)))
                          eglot-server-programs)))
  (let ((conf (default-value 'eglot-workspace-configuration))
        (value (or tclint-settings (make-hash-table))))
    (unless (functionp conf)
      (setq-default eglot-workspace-configuration
                    (if (consp (car-safe conf))          ; the alist form ((SECTION . VALUE) ...)
                        (cons (cons :tclint value) (assq-delete-all :tclint (copy-sequence conf)))
                      (plist-put (copy-sequence conf) :tclint value))))))

(defun tclint--server ()
  (or (eglot-current-server) (user-error "tclint: no eglot server in this buffer (M-x eglot)")))

(defun tclint--position ()
  "The LSP position of point, in the server's encoding."
  (if (fboundp 'eglot--pos-to-lsp-position) (eglot--pos-to-lsp-position)
    (list :line (1- (line-number-at-pos)) :character (- (point) (line-beginning-position)))))

(defun tclint--get (obj &rest keys)
  (seq-some (lambda (k) (let ((v (plist-get obj k))) (and v (not (eq v :null)) v))) keys))

(defun tclint--where (item)
  (let* ((loc (or (tclint--get item :location :loc :user_frame)
                  (let ((frame (plist-get item :frame))) (and (consp frame) frame))
                  item))
         (path (tclint--get loc :path :filename :file :uri))
         (line (tclint--get loc :line :lineno :row)))
    (and (stringp path) line
         (format "%s:%s" (file-name-nondirectory (string-remove-prefix "file://" path)) line))))

(defun tclint--frame-name (c)
  (let ((frame (tclint--get c :frame :function :name)))
    (if (consp frame) (tclint--get frame :qualname :function :name :code_name) frame)))

(defun tclint--no-break-text (report completed compiles errors)
  "What \"no graph break\" means for REPORT: only a COMPLETED run that
produced graphs (from COMPILES) without ERRORS compiled into whole graphs."
  (let ((graphs (or (plist-get report :graphs)
                    (apply #'+ (mapcar (lambda (c) (let ((g (plist-get c :graphs))) (if (numberp g) g 0))) compiles)))))
    (cond ((eq completed 'no) "No graph break was seen before the run stopped (see above): this is not a clean result.")
          ((null compiles) "No graph break, and nothing was compiled: the probe saw no compiled code.")
          ((and (numberp graphs) (= graphs 0)) "No graph break, but no graph was produced either: nothing ran compiled.")
          (errors "No graph break, but the run had errors (see Errors).")
          (t "No graph break: the code compiled into whole graphs."))))

(defun tclint--failed-guard (c)
  (let ((kind (plist-get c :kind)))
    (when (or (null kind) (equal kind "recompile"))
      (let ((guard (tclint--get c :failed_guard :failedGuard :guard_failure :guard)))
        (if (consp guard) (tclint--get guard :guard :text) guard)))))

(defun tclint-format-probe (result title)
  "Lines of text for a probe RESULT titled TITLE.
RESULT is the runtime probe's JSON report (a plist), bare or under
:report.  Per compilation its trigger and failed guard; per graph
break its GB id, hits, link and location."
  (let* ((report (or (tclint--get result :report :result) result))
         (env (plist-get report :environment))
         (status (plist-get report :status))
         (message (tclint--get report :message :summary))
         (compiles (append (tclint--get report :compiles :compilations) nil))
         (breaks (append (tclint--get report :graph_breaks :breaks :graphBreaks) nil))
         (errors (append (plist-get report :errors) nil))
         (err (or (tclint--get result :error) (tclint--get report :error)))
         (completed (cond ((null status) nil) ((member status '("ok" "stopped")) 'yes) (t 'no)))
         (verdict (plist-get report :verdict))
         (lines (list (format "# tclint probe: %s" (file-name-nondirectory (or (tclint--get report :title :target :function :program) title))))))
    (when (or (plist-get env :torch) message)
      (setq lines (append lines (list (format "torch %s · %s" (or (plist-get env :torch) "?") (or message ""))))))
    (setq lines (append lines (list "")))
    (cond (err
           (setq lines (append lines (list (format "Probe failed: %s" (if (stringp err) err (or (plist-get err :message) (format "%S" err)))) ""))))
          ((and (eq completed 'no) message)
           (setq lines (append lines (list (format "Probe failed: %s" message) "")))))
    (when (and (stringp verdict) (not (string-empty-p verdict)))
      (setq lines (append lines (list (format "Verdict: %s" verdict) ""))))
    ;; errors first: compilations and "no graph break" above them would read as a success
    (when errors
      (setq lines (append lines (list (format "## Errors (%d)" (length errors)))))
      (dolist (e errors)
        (setq lines (append lines (list (format "! %s: %s %s%s" (or (plist-get e :kind) "error")
                                                (car (last (split-string (or (plist-get e :type) "") "\\.")))
                                                (or (plist-get e :message) "")
                                                (if (tclint--where e) (format "  at %s" (tclint--where e)) ""))))))
      (setq lines (append lines (list ""))))
    (setq lines (append lines (list (format "## Compilations (%d)" (length compiles)))))
    (let ((i 0))
      (dolist (c compiles)
        (setq i (1+ i))
        (let* ((guard (tclint--failed-guard c))
               (cause (and guard (consp (plist-get c :cause)) (plist-get (plist-get c :cause) :text)))
               (trigger (if guard "guard failed" (or (tclint--get c :trigger :reason) "first call"))))
          (setq lines (append lines (list (format "%d. %s%s  trigger: %s%s" i (or (tclint--frame-name c) "?")
                                                  (if (tclint--where c) (format " (%s)" (tclint--where c)) "")
                                                  trigger
                                                  (cond (cause (format ": %s [Dynamo: %s]" cause guard))
                                                        (guard (format ": %s" guard))
                                                        (t ""))))))
          (when (eq (plist-get c :dropped) t)
            (setq lines (append lines (list (format "   DROPPED by Dynamo: the whole frame runs eagerly on every call (%s: %s)"
                                                    (or (plist-get c :fail_type) "failed") (or (plist-get c :fail_reason) "")))))))))
    (setq lines (append lines (list "" (format "## Graph breaks (%d)" (length breaks)))))
    (unless breaks
      (setq lines (append lines (list (tclint--no-break-text report completed compiles errors)))))
    (dolist (b breaks)
      (let* ((gb (or (tclint--get b :gb_id :gbId :gb) "?"))
             (url (or (tclint--get b :url :link)
                      (and (string-match-p "\\`GB[0-9]+\\'" gb)
                           (format "https://meta-pytorch.github.io/compile-graph-break-site/gb/%s.html" (downcase gb))))))
        (setq lines (append lines (list (format "- %s x%s %s%s" gb
                                                (or (tclint--get b :hits :count)
                                                    (if (eq (plist-get b :hits_counted) :json-false) "? (hits not counted)"
                                                      (or (plist-get b :events) 1)))
                                                (or (tclint--get b :gb_type :reason :message) "")
                                                (if (tclint--where b) (format "  at %s" (tclint--where b)) "")))
                            (and (eq (plist-get b :frame_dropped) t)
                                 (list "  DROPPED by Dynamo: the frame around it runs eagerly on every call (hits not counted)"))
                            (and url (list (concat "  " url)))))))
    lines))

(defvar tclint-last-probe nil "The last probe result (a plist), for other code and tests.")

(defun tclint--run-probe (command arguments title)
  (let* ((server (tclint--server))
         (result (jsonrpc-request server :workspace/executeCommand
                                  (list :command command :arguments arguments)
                                  :timeout 600)))
    (setq tclint-last-probe result)
    (with-current-buffer (get-buffer-create "*tclint-probe*")
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (string-join (tclint-format-probe result title) "\n") "\n"))
      (special-mode)
      (unless noninteractive (display-buffer (current-buffer))))
    result))

;;;###autoload
(defun tclint-probe ()
  "Probe the function at point under TorchDynamo.
Shows its compilations and graph breaks in *tclint-probe*."
  (interactive)
  (when (buffer-modified-p) (save-buffer))
  (tclint--run-probe "tclint.probe"
                     (vector (list :uri (eglot--path-to-uri (buffer-file-name)) :position (tclint--position)))
                     (file-name-nondirectory (buffer-file-name))))

;;;###autoload
(defun tclint-probe-file ()
  "Probe the current file as a program under TorchDynamo."
  (interactive)
  (when (buffer-modified-p) (save-buffer))
  (tclint--run-probe "tclint.probeFile"
                     (vector (list :uri (eglot--path-to-uri (buffer-file-name))))
                     (file-name-nondirectory (buffer-file-name))))

(provide 'tclint-eglot)
;;; tclint-eglot.el ends here
