-- wrk script for the repeated open: the same POST /verifications/individuals on every request.
-- The JSON body is the script's first argument (after the URL on wrk's command line), so the
-- pair it names can be one bench/run.py created for this run.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"

function init(args)
  if args[1] == nil or args[1] == "" then
    error("post_open.lua needs the JSON body as its first argument")
  end
  wrk.body = args[1]
end
