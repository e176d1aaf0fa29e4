/// `/v2/srun_portal_captcha_image_info`'s answer: `{"code":0,"data":"1"}`
/// when the portal wants a picture captcha (a person must log in through
/// the page), `"0"` when not; a portal without captchas answers 404.
enum SrunCaptcha {
    static func read(status: Int, body: [UInt8]) -> Result<Bool, SrunAnswer.Problem> {
        if status == 404 { return .success(false) }
        guard status == 200 else { return .failure(SrunAnswer.Problem(text: "the captcha check answered HTTP \(status)")) }
        return SrunAnswer.read(body, callback: nil).flatMap { answer in
            guard answer.count("code") == 0, let data = answer.text("data", limit: 8), data == "0" || data == "1" else {
                return .failure(SrunAnswer.Problem(text: "the captcha check's answer is not {code:0, data:0|1}"))
            }
            return .success(data == "1")
        }
    }
}
